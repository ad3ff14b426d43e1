// Scope: the symbol table of Lowering (see LowerContext.h), and the names of symbol kinds.
#include "spec/LowerContext.h"

namespace tilegen::spec {

const char* sym_kind_name(SymKind k) {
  switch (k) {
  case SymKind::TypeParam:
    return "type parameter";
  case SymKind::Dim:
    return "runtime dim";
  case SymKind::ValueParam:
    return "value param";
  case SymKind::Flag:
    return "flag";
  case SymKind::Scalar:
    return "scalar";
  case SymKind::Tensor:
    return "tensor";
  case SymKind::TileConst:
    return "tile constant";
  case SymKind::BlockIndex:
    return "block index";
  case SymKind::Buffer:
    return "buffer";
  case SymKind::LoopVar:
    return "loop variable";
  case SymKind::ParallelVar:
    return "parallel index";
  case SymKind::Let:
    return "let temporary";
  }
  return "?";
}

std::string count_of(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " +
         (n == 1 ? one + std::string(" was") : many + std::string(" were"));
}

// ---------------------------------------------------------------------------------------------
// Scope

void Scope::pop() {
  for (const auto& name : frames_.back()) {
    auto it = visible_.find(name);
    retired_.insert_or_assign(name, std::move(it->second));
    visible_.erase(it);
  }
  frames_.pop_back();
}

const Symbol* Scope::lookup(const std::string& name) const {
  auto it = visible_.find(name);
  return it == visible_.end() ? nullptr : &it->second;
}

const Symbol* Scope::retired(const std::string& name) const {
  auto it = retired_.find(name);
  return it == retired_.end() ? nullptr : &it->second;
}

bool Scope::declare(Symbol s, DiagEngine& diag) {
  if (const Symbol* prev = lookup(s.name)) {
    diag.error(s.loc, "duplicate declaration of '" + s.name + "' (already declared as a " +
                          sym_kind_name(prev->kind) + ")");
    diag.note(prev->loc, "previous declaration of '" + s.name + "' is here");
    return false;
  }
  frames_.back().push_back(s.name);
  std::string name = s.name;
  visible_.emplace(std::move(name), std::move(s));
  return true;
}

std::vector<std::string> Scope::visible_names() const {
  std::vector<std::string> out;
  out.reserve(visible_.size());
  for (const auto& [name, sym] : visible_)
    out.push_back(name);
  return out;
}

} // namespace tilegen::spec
