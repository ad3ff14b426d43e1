// The WGSL backend: placement of buffers, the module (bindings, workgroup memory, entry
// point) and expressions. Op lowerings are in WgslOps.cpp, helper functions in
// WgslHelpers.cpp. See WgslEmitter.h for the execution model, docs/wgsl.md for the output.
#include "emit/WgslEmitter.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "support/InternalError.h"
#include "support/TextEscape.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <set>

namespace tilegen::emit {

using namespace ir;

namespace {

int64_t imm(const Expr& e) {
  auto c = e->as<IntImm>();
  return c ? c->value : -1;
}

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Finds the accesses that rule a rank-2 fragment out of the distributed register layout.
class PlacementScan : public IRVisitor {
public:
  std::set<const Buffer*> candidates; // rank-2 fragments with constant shapes
  std::set<const Buffer*> demoted;
  std::set<const Buffer*> reduced_by_row; // sources of reduce(dim = 1)

protected:
  // Inside a parallel: its vars and extents; the (row, col) var pair its distributed
  // accesses use (one pair per parallel).
  const Parallel* par_ = nullptr;
  const Var* row_ = nullptr;
  const Var* col_ = nullptr;
  std::vector<const Buffer*> par_bufs_;

  void check_access(const BufferPtr& b, const std::vector<Expr>& idx) {
    if (!candidates.count(b.get()))
      return;
    if (!par_) {
      demoted.insert(b.get());
      return;
    }
    auto r = idx[0]->as<VarRef>(), c = idx[1]->as<VarRef>();
    auto extent_of = [&](const Var* v) -> int64_t {
      for (size_t i = 0; i < par_->vars.size(); ++i)
        if (par_->vars[i].get() == v)
          return imm(par_->extents[i]);
      return -1;
    };
    if (!r || !c || r->var == c->var || extent_of(r->var.get()) != imm(b->shape[0]) ||
        extent_of(c->var.get()) != imm(b->shape[1])) {
      demoted.insert(b.get());
      return;
    }
    if (!row_) {
      row_ = r->var.get();
      col_ = c->var.get();
    }
    if (row_ != r->var.get() || col_ != c->var.get())
      demoted.insert(b.get());
    par_bufs_.push_back(b.get());
  }
  void visit_Load(const Load* n) override {
    check_access(n->buffer, n->indices);
    IRVisitor::visit_Load(n);
  }
  void visit_Store(const Store* n) override {
    check_access(n->buffer, n->indices);
    IRVisitor::visit_Store(n);
  }
  void visit_Parallel(const Parallel* n) override {
    par_ = n;
    row_ = col_ = nullptr;
    par_bufs_.clear();
    visit(n->body);
    // One pair per parallel: if a buffer was demoted, its partners stay (they agree).
    par_ = nullptr;
  }
  void visit_Gemm(const Gemm* n) override {
    demoted.insert(n->a.get());
    demoted.insert(n->b.get());
  }
  void visit_Reduce(const Reduce* n) override {
    if (n->dim != 1)
      demoted.insert(n->src.get());
    else
      reduced_by_row.insert(n->src.get());
    demoted.insert(n->dst.get());
  }
  void visit_Copy(const Copy* n) override {
    for (const Region* r : {&n->src, &n->dst})
      if (candidates.count(r->buffer.get()))
        for (const auto& o : r->offsets)
          if (imm(o) != 0)
            demoted.insert(r->buffer.get());
    // A copy between two distributed fragments must keep points on their owners.
    IRVisitor::visit_Copy(n);
  }
  void visit_region(const Region& r) override {
    for (const auto& o : r.offsets)
      visit(o);
  }
};

} // namespace

// ---------------------------------------------------------------------------------------------
// Placement

WgslPlace WgslEmitter::place(const BufferPtr& b) const {
  if (b->scope == MemScope::Global)
    return WgslPlace::Global;
  auto it = place_.find(b.get());
  return it == place_.end() ? WgslPlace::Workgroup : it->second;
}

int64_t WgslEmitter::const_extent(const Expr& e, const std::string& what) const {
  auto c = e->as<IntImm>();
  TG_ASSERT(c, "WGSL emitter: " + what + " of kernel '" + k_.name + "' is not a constant");
  return c->value;
}

void WgslEmitter::plan() {
  const int64_t threads = const_extent(k_.threads, "the thread count");
  if (!(threads >= 1 && threads <= target_.wgsl.max_invocations && is_pow2(threads))) {
    layout_.problem = "kernel '" + k_.name + "' asks for " + std::to_string(threads) +
                      " threads; target '" + target_.name + "' runs powers of two up to " +
                      std::to_string(target_.wgsl.max_invocations) +
                      " (give the spec a `schedule.targets.wgsl` entry)";
    return;
  }
  layout_.threads = static_cast<int>(threads);

  // Candidates: every rank-2 fragment with a constant shape.
  class Allocs : public IRVisitor {
  public:
    std::vector<BufferPtr> bufs;

  protected:
    void visit_Alloc(const Alloc* n) override { bufs.push_back(n->buffer); }
  } allocs;
  allocs.visit(k_.body);
  PlacementScan scan;
  for (const auto& b : allocs.bufs)
    if (b->scope == MemScope::Fragment && b->rank() == 2 && imm(b->shape[0]) > 0 &&
        imm(b->shape[1]) > 0)
      scan.candidates.insert(b.get());
  scan.visit(k_.body);

  // The invocation grid: TY x TX = threads, both powers of two, dividing every distributed
  // fragment's rows and columns. Among the grids valid for the most fragment elements, the
  // one whose per-invocation tiles are squarest (register blocking), then the wider TX.
  std::vector<const Buffer*> dist;
  for (const auto& b : allocs.bufs)
    if (scan.candidates.count(b.get()) && !scan.demoted.count(b.get()))
      dist.push_back(b.get());
  int best_tx = static_cast<int>(threads);
  int64_t best_cover = -1;
  double best_skew = 0;
  for (int tx = 1; tx <= threads; tx *= 2) {
    const int ty = static_cast<int>(threads) / tx;
    int64_t cover = 0;
    double skew = 0;
    for (const Buffer* b : dist) {
      const int64_t r = imm(b->shape[0]), c = imm(b->shape[1]);
      if (r % ty == 0 && c % tx == 0) {
        cover += r * c;
        skew = std::max(skew, std::fabs(std::log2(double(r / ty)) - std::log2(double(c / tx))));
      }
    }
    if (cover > best_cover || (cover == best_cover && skew <= best_skew)) {
      best_cover = cover;
      best_skew = skew;
      best_tx = tx;
    }
  }
  layout_.tx = best_tx;
  layout_.ty = static_cast<int>(threads) / best_tx;
  for (const Buffer* b : dist)
    if (imm(b->shape[0]) % layout_.ty == 0 && imm(b->shape[1]) % layout_.tx == 0)
      place_[b] = WgslPlace::Registers;

  // Workgroup memory: every other on-chip buffer, plus the reduction scratch.
  int64_t bytes = 0;
  std::string list;
  for (const auto& b : allocs.bufs) {
    if (place(b) != WgslPlace::Workgroup)
      continue;
    int64_t n = 4;
    for (const auto& e : b->shape)
      n *= const_extent(e, "the shape of buffer '" + b->name + "'");
    bytes += n;
    list += " " + b->name + "=" + std::to_string(n);
  }
  for (const Buffer* b : scan.reduced_by_row)
    if (place_.count(b) && place_.at(b) == WgslPlace::Registers)
      red_slots_ = std::max<int64_t>(red_slots_, imm(b->shape[0]) * layout_.tx);
  bytes += red_slots_ * 4;
  if (red_slots_)
    list += " tg_red=" + std::to_string(red_slots_ * 4);
  layout_.workgroup_bytes = bytes;
  if (bytes > target_.wgsl.workgroup_storage_bytes && layout_.problem.empty())
    layout_.problem = "kernel '" + k_.name + "' needs " + std::to_string(bytes) +
                      " B of workgroup memory (" + list.substr(list.empty() ? 0 : 1) +
                      "), more than the " + std::to_string(target_.wgsl.workgroup_storage_bytes) +
                      " B of target '" + target_.name +
                      "' (give the spec smaller tiles in `schedule.targets.wgsl`)";
  if (target_.wgsl.shader_f16)
    layout_.enables.push_back("f16");
  if (target_.wgsl.subgroups)
    layout_.enables.push_back("subgroups");
  plan_storage();
}

void WgslEmitter::plan_storage() {
  std::set<const Buffer*> atomic_dst;
  class Atomics : public IRVisitor {
  public:
    std::set<const Buffer*>* out;

  protected:
    void visit_AtomicAdd(const AtomicAdd* n) override { out->insert(n->dst.buffer.get()); }
  } atom;
  atom.out = &atomic_dst;
  atom.visit(k_.body);
  int n_storage = 0;
  for (const auto& t : k_.tensors) {
    ++n_storage;
    const DType d = t->dtype;
    if (d == DType::i64() || d == DType::f64() || d == DType::u64() || d == DType::boolean()) {
      if (layout_.problem.empty())
        layout_.problem = "tensor '" + t->name + "' of kernel '" + k_.name + "' has dtype " +
                          d.name() + ", which WGSL storage cannot hold (no 64-bit types; bool "
                          "is not host-shareable)";
      continue;
    }
    const bool sub_word = d == DType::bf16() || d == DType::i8() || d.is_fp8() || d.is_narrow_unsigned() ||
                          (d == DType::f16() && !target_.wgsl.shader_f16);
    WgslStorage s = WgslStorage::Plain;
    if (atomic_dst.count(t.get())) {
      if (d != DType::f32() && d != DType::i32() && layout_.problem.empty())
        layout_.problem = "atomic_add into " + std::string(d.name()) + " tensor '" + t->name +
                          "' of kernel '" + k_.name + "': WGSL atomics are 32-bit integers";
      s = d == DType::f32() ? WgslStorage::AtomicF32 : WgslStorage::AtomicI32;
    } else if (sub_word) {
      s = t->access == Access::Read ? WgslStorage::Packed : WgslStorage::PackedAtomic;
    }
    storage_[t.get()] = s;
    std::string elem = storage_type_name(d);
    if (s == WgslStorage::Packed)
      elem = "u32";
    else if (s == WgslStorage::PackedAtomic || s == WgslStorage::AtomicF32)
      elem = "atomic<u32>";
    else if (s == WgslStorage::AtomicI32)
      elem = "atomic<i32>";
    layout_.element_types.push_back(elem);
    layout_.binding_types.push_back(t->access == Access::Read && elem.rfind("atomic", 0) != 0
                                        ? "read-only-storage"
                                        : "storage");
    layout_.packed.push_back(s == WgslStorage::Packed || s == WgslStorage::PackedAtomic);
  }
  if (n_storage > target_.wgsl.max_storage_buffers && layout_.problem.empty())
    layout_.problem = "kernel '" + k_.name + "' has " + std::to_string(n_storage) +
                      " tensors, more than the " + std::to_string(target_.wgsl.max_storage_buffers) +
                      " storage buffers a WebGPU shader stage may bind";
}

WgslLayout wgsl_layout(const Kernel& k, const Target& target) {
  VariantInfo info;
  WgslEmitter e(k, target, info);
  return e.layout();
}

// ---------------------------------------------------------------------------------------------
// Tables

std::string WgslEmitter::type_name(DType t) const {
  switch (t.kind) {
  case ScalarKind::Bool: return "bool";
  case ScalarKind::I8:
  case ScalarKind::I32:
  case ScalarKind::I64: return "i32"; // no 64-bit types: the host checks extents < 2^31
  case ScalarKind::U8:
  case ScalarKind::U16: // computed as u32, packed in storage
  case ScalarKind::U32: return "u32";
  case ScalarKind::U64: break; // check_wgsl refuses it
  case ScalarKind::F16:
  case ScalarKind::BF16:
  case ScalarKind::E4M3:
  case ScalarKind::E5M2:
  case ScalarKind::F32: return "f32";
  case ScalarKind::F64: break;
  }
  internal_error("WGSL emitter: f64 or u64 survived LegalizeWgsl");
}

std::string WgslEmitter::storage_type_name(DType t) const {
  if (t == DType::f16() && target_.wgsl.shader_f16)
    return "f16";
  return t.is_narrow_float() || t == DType::i8() || t.is_narrow_unsigned() ? "u32" : type_name(t);
}

// LegalizeWgsl maps +-inf literals to +-FLT_MAX (WGSL may assume no infinity occurs); a literal
// that folding made infinite later (FLT_MAX rounded to bf16 by a constant cast) gets the same.
// Printed in hex, as print_float prints every literal near FLT_MAX: the shortest decimal,
// 3.4028235e+38, reads back above FLT_MAX, which Tint rejects ("value cannot be represented").
namespace {
std::string hex_f32_literal(float v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%af", static_cast<double>(v));
  return buf;
}
} // namespace

std::string WgslEmitter::inf_literal(DType) const { return hex_f32_literal(FLT_MAX); }
std::string WgslEmitter::nan_literal(DType) const { return "bitcast<f32>(0x7fc00000u)"; }

std::string WgslEmitter::math_name(Intrinsic fn, DType t) const {
  switch (fn) {
  case Intrinsic::Abs: return "abs";
  case Intrinsic::Exp: return "exp";
  case Intrinsic::Exp2: return "exp2";
  case Intrinsic::Log: return "log";
  case Intrinsic::Log2: return "log2";
  case Intrinsic::Sqrt: return "sqrt";
  case Intrinsic::Rsqrt: return "inverseSqrt";
  case Intrinsic::Tanh: return "tanh";
  case Intrinsic::Erf: return "tg_erf";
  case Intrinsic::Floor: return "floor";
  case Intrinsic::Ceil: return "ceil";
  case Intrinsic::BitCast: return ""; // print_bitcast
  }
  (void)t;
  return "";
}

const std::set<std::string>& WgslEmitter::reserved_words() const {
  // WGSL keywords and reserved words (WGSL spec, "Keyword Summary" and "Reserved Words"),
  // predeclared types and the built-in functions generated code calls.
  static const std::set<std::string> words = {
      "alias", "break", "case", "const", "const_assert", "continue", "continuing", "default",
      "diagnostic", "discard", "else", "enable", "false", "fn", "for", "if", "let", "loop",
      "override", "requires", "return", "struct", "switch", "true", "var", "while",
      "NULL", "Self", "abstract", "active", "alignas", "alignof", "as", "asm", "asm_fragment",
      "async", "attribute", "auto", "await", "become", "cast", "catch", "class", "co_await",
      "co_return", "co_yield", "coherent", "column_major", "common", "compile",
      "compile_fragment", "concept", "const_cast", "consteval", "constexpr", "constinit",
      "crate", "debugger", "decltype", "delete", "demote", "demote_to_helper", "do",
      "dynamic_cast", "enum", "explicit", "export", "extends", "extern", "external",
      "fallthrough", "filter", "final", "finally", "friend", "from", "fxgroup", "get", "goto",
      "groupshared", "highp", "impl", "implements", "import", "inline", "instanceof",
      "interface", "layout", "lowp", "macro", "macro_rules", "match", "mediump", "meta", "mod",
      "module", "move", "mut", "mutable", "namespace", "new", "nil", "noexcept", "noinline",
      "nointerpolation", "non_coherent", "noncoherent", "noperspective", "null", "nullptr",
      "of", "operator", "package", "packoffset", "partition", "pass", "patch",
      "pixelfragment", "precise", "precision", "premerge", "priv", "protected", "pub",
      "public", "readonly", "ref", "regardless", "register", "reinterpret_cast", "require",
      "resource", "restrict", "self", "set", "shared", "sizeof", "smooth", "snorm", "static",
      "static_assert", "static_cast", "std", "subroutine", "super", "target", "template",
      "this", "thread_local", "throw", "trait", "try", "type", "typedef", "typeid", "typename",
      "typeof", "union", "unless", "unorm", "unsafe", "unsized", "use", "using", "varying",
      "virtual", "volatile", "wgsl", "where", "with", "writeonly", "yield",
      // predeclared types and enumerants
      "bool", "f16", "f32", "i32", "u32", "array", "atomic", "ptr", "vec2", "vec3", "vec4",
      "mat2x2", "mat3x3", "mat4x4", "sampler", "function", "private", "workgroup", "uniform",
      "storage", "read", "write", "read_write",
      // built-in functions called by generated code
      "abs", "exp", "exp2", "log", "log2", "sqrt", "inverseSqrt", "tanh", "floor", "ceil",
      "min", "max", "select", "fma", "bitcast", "atomicLoad", "atomicAnd", "atomicOr",
      "atomicAdd", "atomicCompareExchangeWeak", "workgroupBarrier", "extractBits",
      "subgroupShuffleXor", "main"};
  return words;
}

// ---------------------------------------------------------------------------------------------
// Expressions

Expr WgslEmitter::ref(const std::string& n) {
  auto it = gen_vars_.find(n);
  if (it == gen_vars_.end())
    it = gen_vars_.emplace(n, make_var(n, VarKind::LoopVar, DType::i64())).first;
  return VarRef::make(it->second);
}

std::string WgslEmitter::print_int(const IntImm* i, int& prec) {
  if (!i->name.empty())
    return name(i->name);
  if (i->type.is_unsigned()) {
    TG_ASSERT(i->value >= 0 && i->value <= int64_t{UINT32_MAX} && i->type != DType::u64(),
              "WGSL emitter: unsigned constant outside u32 survived check_wgsl");
    return std::to_string(i->value) + "u";
  }
  TG_ASSERT(i->value >= INT32_MIN && i->value <= INT32_MAX,
            "WGSL emitter: integer " + std::to_string(i->value) + " of kernel '" + k_.name +
                "' does not fit i32 (WGSL has no 64-bit integers)");
  if (i->value < 0) {
    prec = kUnary;
    return i->value == INT32_MIN ? "i32(-2147483648)" : "-" + std::to_string(-i->value);
  }
  return std::to_string(i->value);
}

// Decimal literals near FLT_MAX read back above it, which WGSL rejects: those are hex.
std::string WgslEmitter::print_float(double v, DType t, int& prec) {
  if (std::isfinite(v) && std::fabs(v) >= 3.4e38) {
    TG_ASSERT(std::fabs(v) <= FLT_MAX, "WGSL emitter: float literal beyond f32 range");
    prec = v < 0 ? kUnary : kPrimary;
    return hex_f32_literal(static_cast<float>(v));
  }
  return CFamilyPrinter::print_float(v, t, prec);
}

// WGSL does not let `&&`/`||`, bitwise and relational operators mix without parentheses:
// every operand that is itself a binary operation is parenthesized.
std::string WgslEmitter::print_binary(const Binary* b, int& prec) {
  const DType t = b->a->type;
  auto operand = [&](const Expr& e) {
    int p = kPrimary;
    std::string s = print(e, p);
    return p < kUnary ? "(" + s + ")" : s;
  };
  if (b->op == BinaryOp::Shl || b->op == BinaryOp::Shr) {
    // i64 is held in an i32 here (type_name): its shifts are the i32 ones, which agree with
    // 64-bit shifts wherever the value fits i32 (docs/wgsl.md). A constant count must be below
    // 32 in WGSL (a shader-creation error otherwise), so only those print as the operator.
    auto k = b->b->as<IntImm>();
    if ((b->op == BinaryOp::Shr || t.is_unsigned()) && k && k->value >= 0 &&
        k->value < std::min(32, t.bits())) { // an unsigned << k wraps: the operator is exact
      prec = kShift;
      return operand(b->a) + (b->op == BinaryOp::Shr ? " >> " : " << ") + std::to_string(k->value) + "u";
    }
    const std::string f = std::string(b->op == BinaryOp::Shl ? "tg_shl_" : "tg_shr_") +
                          (t == DType::i8() ? "i8" : t.is_unsigned() ? "u32" : "i32");
    return need(f) + "(" + expr(b->a) + ", " + expr(b->b) + ")";
  }
  if (t.is_unsigned() && (b->op == BinaryOp::Div || b->op == BinaryOp::Mod) &&
      divisor_needs_guard(b)) { // WGSL's u32 / 0 is a, % 0 is 0: docs/spec.md wants 0 and a
    const std::string f = b->op == BinaryOp::Div ? "tg_div_any_u32" : "tg_mod_any_u32";
    return need(f) + "(" + expr(b->a) + ", " + expr(b->b) + ")";
  }
  const char* fn = nullptr;
  switch (b->op) {
  case BinaryOp::Min: fn = "min"; break;
  case BinaryOp::Max: fn = "max"; break;
  case BinaryOp::CeilDiv: fn = "tg_cdiv"; break;
  case BinaryOp::Div: fn = t.is_signed_int() ? "tg_floordiv" : nullptr; break;
  case BinaryOp::Mod: fn = t.is_signed_int() ? "tg_floormod" : nullptr; break;
  default: break;
  }
  if (fn) {
    std::string f = std::string(fn) + (divisor_needs_guard(b) ? "_any" : "");
    if (f.rfind("tg_", 0) == 0)
      need(f);
    return f + "(" + expr(b->a) + ", " + expr(b->b) + ")";
  }
  prec = c_binary_prec(b->op, t);
  return operand(b->a) + " " + c_binary_op(b->op) + " " + operand(b->b);
}

std::string WgslEmitter::print_select(const Select* s, int& prec) {
  prec = kPrimary;
  return "select(" + expr(s->f) + ", " + expr(s->t) + ", " + expr(s->cond) + ")";
}

std::string WgslEmitter::print_call(const Call* c, int& prec) {
  prec = kPrimary;
  if (c->fn == Intrinsic::BitCast)
    return "bitcast<" + type_name(c->type) + ">(" + expr(c->args[0]) + ")";
  const std::string fn = math_name(c->fn, c->type);
  if (fn.rfind("tg_", 0) == 0)
    need(fn);
  // A builtin called on a constant is evaluated when the shader is created, where a domain
  // error (sqrt(-96.0f), log(0.0f)) or an overflow (exp(100.0f)) is a shader-creation error;
  // through tg_rt the argument is a run-time value and the call gives NaN or inf, as in C.
  const Expr arg = simplify(c->args[0]);
  if (arg->as<FloatImm>() && type_name(arg->type) == "f32")
    return fn + "(" + need("tg_rt") + "(" + expr(c->args[0]) + "))";
  return fn + "(" + expr(c->args[0]) + ")";
}

std::string WgslEmitter::print_cast(const Cast* c, int& prec) {
  const DType to = c->type, from = c->value->type;
  prec = kPrimary;
  if (to.is_narrow_unsigned()) // wraps like C's conversion to uint8_t / uint16_t
    return "(" + (type_name(from) == "u32" ? expr(c->value, kUnary) : "u32(" + expr(c->value) + ")") +
           (to == DType::u8() ? " & 0xffu)" : " & 0xffffu)");
  if (to == from || type_name(to) == type_name(from)) {
    if (to.is_narrow_float() && !from.is_narrow_float())
      ; // rounding below
    else
      return print(c->value, prec);
  }
  if (to.is_bool())
    return "(" + expr(c->value) + " != " + (from.is_float() ? "0.0f" : "0") + ")";
  if (to.is_narrow_float()) {
    std::string v = type_name(from) == "f32" ? expr(c->value) : "f32(" + expr(c->value) + ")";
    return need(std::string("tg_round_") + to.name()) + "(" + v + ")";
  }
  if (to == DType::i8()) // wraps like C's conversion to int8_t
    return "extractBits(" + (type_name(from) != "i32" ? "i32(" + expr(c->value) + ")" : expr(c->value)) +
           ", 0u, 8u)"; // i32: sign-extending
  if (from.is_bool())
    return "select(" + std::string(to.is_float() ? "0.0f, 1.0f" : to.is_unsigned() ? "0u, 1u" : "0, 1") +
           ", " + expr(c->value) + ")";
  // a 32-bit integer into f32: rounded to nearest even as on every backend (docs/wgsl.md);
  // a value masked to at most 24 bits (`x & 15u`: unpacked codes) converts exactly as it is
  const auto* masked = c->value->as<Binary>();
  const auto* mask = masked && masked->op == BinaryOp::BitAnd ? masked->b->as<IntImm>() : nullptr;
  const bool small = mask && mask->value >= 0 && mask->value < (int64_t(1) << 24);
  if (type_name(to) == "f32" && (type_name(from) == "u32" || type_name(from) == "i32") &&
      !from.is_narrow_unsigned() && from != DType::i8() && !small)
    return need(type_name(from) == "u32" ? "tg_f32_of_u32" : "tg_f32_of_i32") + "(" + expr(c->value) + ")";
  return type_name(to) + "(" + expr(c->value) + ")";
}

// Row-major linear index, Horner form, in i32.
std::string WgslEmitter::linear(const BufferPtr& b, const std::vector<Expr>& idx) {
  Expr lin = idx[0];
  for (size_t d = 1; d < idx.size(); ++d)
    lin = Binary::make(BinaryOp::Add, Binary::make(BinaryOp::Mul, lin, b->shape[d]), idx[d]);
  return expr(simplify(lin));
}

std::string WgslEmitter::in_bounds(const BufferPtr& b, const std::vector<Expr>& idx) {
  std::string s;
  for (size_t d = 0; d < idx.size(); ++d)
    s += (d ? " && " : "") + need("tg_inb") + "(" + expr(idx[d]) + ", " + expr(b->shape[d]) + ")";
  return s;
}

std::string WgslEmitter::reg_index(const BufferPtr& b, const std::vector<Expr>& idx) {
  auto r = idx[0]->as<VarRef>(), c = idx[1]->as<VarRef>();
  TG_ASSERT(r && c && r->var.get() == dist_row_ && c->var.get() == dist_col_,
            "WGSL emitter: register fragment '" + b->name + "' accessed off its layout");
  const int64_t cb = imm(b->shape[1]) / layout_.tx;
  return name(b->name) + "[tg_a * " + std::to_string(cb) + " + tg_b]";
}

std::string WgslEmitter::load_raw(const BufferPtr& b, const std::vector<Expr>& idx) {
  const std::string n = name(b->name);
  switch (place(b)) {
  case WgslPlace::Registers: return reg_index(b, idx);
  case WgslPlace::Workgroup: return n + "[" + linear(b, idx) + "]";
  case WgslPlace::Global: break;
  }
  const std::string e = linear(b, idx);
  const DType d = b->dtype;
  switch (storage_.at(b.get())) {
  case WgslStorage::Plain:
    return d == DType::f16() ? "f32(" + n + "[" + e + "])" : n + "[" + e + "]";
  case WgslStorage::AtomicF32: return "bitcast<f32>(atomicLoad(&" + n + "[" + e + "]))";
  case WgslStorage::AtomicI32: return "atomicLoad(&" + n + "[" + e + "])";
  case WgslStorage::Packed:
  case WgslStorage::PackedAtomic: {
    const bool atomic = storage_.at(b.get()) == WgslStorage::PackedAtomic;
    const std::string fn = std::string("tg_ld_") + d.name(); // bf16, f16, i8, e4m3, e5m2
    const int per_word = 4 / d.bytes();
    const std::string word = n + "[(" + e + ") / " + std::to_string(per_word) + "]";
    return need(fn) + "(" + (atomic ? "atomicLoad(&" + word + ")" : word) + ", " + e + ")";
  }
  }
  return "";
}

std::string WgslEmitter::store_raw(const BufferPtr& b, const std::vector<Expr>& idx,
                                   const std::string& v) {
  const std::string n = name(b->name);
  switch (place(b)) {
  case WgslPlace::Registers: return reg_index(b, idx) + " = " + v + ";";
  case WgslPlace::Workgroup: return n + "[" + linear(b, idx) + "] = " + v + ";";
  case WgslPlace::Global: break;
  }
  const std::string e = linear(b, idx);
  const DType d = b->dtype;
  switch (storage_.at(b.get())) {
  case WgslStorage::Plain:
    return n + "[" + e + "] = " + (d == DType::f16() ? "f16(" + need("tg_round_f16") + "(" + v + "))" : v) + ";";
  case WgslStorage::AtomicF32: return "atomicStore(&" + n + "[" + e + "], bitcast<u32>(" + v + "));";
  case WgslStorage::AtomicI32: return "atomicStore(&" + n + "[" + e + "], " + v + ");";
  case WgslStorage::Packed: internal_error("WGSL emitter: store into read-only tensor '" + b->name + "'");
  case WgslStorage::PackedAtomic: {
    // Two (four) invocations may own the halves (bytes) of one word: clear ours, then set
    // it, each an atomic read-modify-write of the whole word.
    const std::string fn = std::string("tg_bits_") + d.name();
    const int per_word = 4 / d.bytes();
    const bool byte = d.bytes() == 1;
    const std::string width = byte ? "8u" : "16u";
    return "{ let tg_w = &" + n + "[(" + e + ") / " + std::to_string(per_word) +
           "]; let tg_sh = u32((" + e + ") % " + std::to_string(per_word) + ") * " + width +
           "; atomicAnd(tg_w, ~(" + (byte ? "0xffu" : "0xffffu") +
           " << tg_sh)); atomicOr(tg_w, " + need(fn) + "(" + v + ") << tg_sh); }";
  }
  }
  return "";
}

std::string WgslEmitter::value_for(const BufferPtr& b, const Expr& v) {
  Expr x = v;
  if (b->scope == MemScope::Global && b->dtype.is_narrow_float()) {
    // store_raw rounds to the narrow type: a cast to it already in the value is that same
    // rounding, done once there.
    if (auto c = x->as<Cast>(); c && c->type == b->dtype)
      x = c->value;
    if (type_name(x->type) != "f32")
      x = Cast::make(DType::f32(), x);
    return expr(x);
  }
  if (type_name(x->type) != type_name(b->dtype) || (b->dtype == DType::i8() && x->type != DType::i8()) ||
      (b->dtype.is_narrow_unsigned() && b->scope != MemScope::Global && x->type != b->dtype))
    x = simplify(Cast::make(b->dtype, x));
  return expr(x);
}

std::string WgslEmitter::print_load(const Load* l, int& prec) {
  prec = kPrimary;
  std::string v = load_raw(l->buffer, l->indices);
  if (l->buffer->scope != MemScope::Global || !guard_loads_)
    return v;
  // Out-of-bounds global reads give 0, or a copy's pad value (docs/ir.md, Load). WebGPU's
  // robust buffer access makes the unguarded read itself harmless.
  std::string other = l->type.is_float() ? "0.0f" : l->type.is_unsigned() ? "0u" : "0";
  if (load_pad_) {
    Expr p = load_pad_;
    if (type_name(p->type) != type_name(l->type))
      p = simplify(Cast::make(l->type.is_narrow_float() ? DType::f32() : l->type, p));
    other = expr(p);
  }
  return "select(" + other + ", " + v + ", " + in_bounds(l->buffer, l->indices) + ")";
}

// ---------------------------------------------------------------------------------------------
// Module

WgslEmitter::WgslEmitter(const Kernel& k, const Target& target, const VariantInfo& info)
    : k_(k), target_(target), info_(info) {
  plan();
}

std::string WgslEmitter::header_comment() const {
  std::string s = "// Generated by tilegen: do not edit.\n";
  s += "//   spec:     " + wgsl_line_comment(info_.spec_path) + "\n";
  s += "//   kernel:   " + k_.name +
       (k_.summary.empty() ? "" : " (" + wgsl_line_comment(k_.summary) + ")") + "\n";
  std::string inst = k_.type_suffix();
  for (const auto& f : k_.flags)
    if (auto it = k_.bindings.find(f->name); it != k_.bindings.end())
      inst += " " + f->name + "=" + std::to_string(it->second);
  for (const auto& d : k_.dims)
    if (auto it = k_.bindings.find(d.var->name); it != k_.bindings.end())
      inst += " " + d.var->name + "=" + std::to_string(it->second);
  s += "//   instance: " + inst + "\n";
  s += "//   target:   " + target_.name + " (" + wgsl_line_comment(target_.summary) + ")\n";
  for (const auto& n : k_.notes)
    s += "//   schedule: " + wgsl_line_comment(n) + "\n";
  s += "// Workgroup: " + std::to_string(layout_.threads) + " invocations as a " +
       std::to_string(layout_.ty) + " x " + std::to_string(layout_.tx) +
       " grid (ty x tx) for register fragments; " + std::to_string(layout_.workgroup_bytes) +
       " B of workgroup memory.\n";
  s += "// Bindings (group 0): 0 = uniform tg_p (dims as i32, scalars, in spec order)";
  for (size_t i = 0; i < k_.tensors.size(); ++i)
    s += ", " + std::to_string(i + 1) + " = " + k_.tensors[i]->name;
  return s + ".\n";
}

std::string WgslEmitter::module_decls() {
  std::string s;
  for (const auto& e : layout_.enables)
    s += "enable " + e + ";\n";
  if (!layout_.enables.empty())
    s += "\n";
  // Tile constants as named constants (readability: the body uses their names).
  for (const auto& tc : k_.tile_consts) {
    auto it = k_.bindings.find(tc.var->name);
    TG_ASSERT(it != k_.bindings.end(), "WGSL emitter: tile constant '" + tc.var->name + "' is not bound");
    s += "const " + name(tc.var->name) + ": i32 = " + std::to_string(it->second) + ";\n";
  }
  s += "const TG_THREADS: i32 = " + std::to_string(layout_.threads) + ";\n";
  s += "const TG_TY: i32 = " + std::to_string(layout_.ty) + ";\n";
  s += "const TG_TX: i32 = " + std::to_string(layout_.tx) + ";\n\n";

  s += "// Run-time arguments: every dim (i32), then every scalar, 4 bytes each.\nstruct TgParams {\n";
  size_t fields = 0;
  for (const auto& d : k_.dims) {
    s += "  " + name(d.var->name) + ": i32,\n";
    ++fields;
  }
  for (const auto& v : k_.scalars) {
    s += "  " + name(v->name) + ": " + type_name(v->type) + ",\n";
    ++fields;
  }
  if (fields == 0)
    s += "  tg_unused: i32,\n";
  s += "}\n@group(0) @binding(0) var<uniform> tg_p: TgParams;\n";
  for (size_t i = 0; i < k_.tensors.size(); ++i) {
    const auto& t = k_.tensors[i];
    const std::string elem = layout_.element_types[i];
    const std::string access = layout_.binding_types[i] == "storage" ? "read_write" : "read";
    std::string note = t->dtype.name();
    if (storage_.at(t.get()) == WgslStorage::Packed || storage_.at(t.get()) == WgslStorage::PackedAtomic)
      note += std::string(", ") + (t->dtype.bytes() == 1 ? "4" : "2") + " per u32 word, little-endian";
    s += "@group(0) @binding(" + std::to_string(i + 1) + ") var<storage, " + access + "> " +
         name(t->name) + ": array<" + elem + ">; // " + note + "\n";
  }
  return s;
}

std::string WgslEmitter::run() {
  // The driver reports layout problems as user errors before it emits (wgsl_layout).
  TG_ASSERT(layout_.problem.empty(), "WGSL emitter: " + layout_.problem);
  emit_entry();
  std::string body = out_.str();
  out_.str("");
  std::string s = header_comment() + "\n" + module_decls() +
                  "// Set by the host for a grid folded into the device's workgroups per dimension.\n"
                  "override tg_folded: bool = false;\n\n";
  // Workgroup buffers (module scope in WGSL), in declaration order.
  class Allocs : public IRVisitor {
  public:
    std::vector<BufferPtr> bufs;

  protected:
    void visit_Alloc(const Alloc* n) override { bufs.push_back(n->buffer); }
  } allocs;
  allocs.visit(k_.body);
  for (const auto& b : allocs.bufs) {
    if (place(b) != WgslPlace::Workgroup)
      continue;
    int64_t n = 1;
    std::string dims;
    for (const auto& e : b->shape) {
      n *= imm(e);
      dims += (dims.empty() ? "" : " x ") + std::to_string(imm(e));
    }
    s += "var<workgroup> " + name(b->name) + ": array<" + type_name(b->dtype) + ", " +
         std::to_string(n) + ">; // " + mem_scope_name(b->scope) + " " + dims + ", row-major\n";
  }
  if (red_slots_)
    s += "var<workgroup> tg_red: array<f32, " + std::to_string(red_slots_) +
         ">; // partials of row reductions: [row][tx]\n";
  if (red_slots_ && target_.wgsl.subgroups)
    s += "var<workgroup> tg_sg_bad: atomic<u32>; // set when subgroups are not consecutive lanes\n"
         "var<workgroup> tg_sg_mode: u32;\n";
  s += "\n" + wgsl_helper_source(helpers_) + body;
  return s;
}

void WgslEmitter::emit_entry() {
  line("// One workgroup runs one block of the grid.");
  line("@compute @workgroup_size(" + std::to_string(layout_.threads) + ")");
  std::string params = "@builtin(local_invocation_index) tg_lid: u32, @builtin(workgroup_id) tg_wid: vec3<u32>, "
                       "@builtin(num_workgroups) tg_nwg: vec3<u32>";
  if (target_.wgsl.subgroups)
    params += ", @builtin(subgroup_size) tg_sg_size: u32, @builtin(subgroup_invocation_id) tg_sg_lane: u32";
  open("fn " + info_.function_name + "(" + params + ")");
  line("let tg_tid = i32(tg_lid);");
  line("let tg_ty = tg_tid / TG_TX;");
  line("let tg_tx = tg_tid % TG_TX;");
  for (const auto& d : k_.dims)
    if (d.var->kind == VarKind::Dim)
      line("let " + name(d.var->name) + " = tg_p." + name(d.var->name) + ";");
  for (const auto& v : k_.scalars)
    line("let " + name(v->name) + " = tg_p." + name(v->name) + ";");
  // A grid with an extent over the device's workgroups per dimension is dispatched folded
  // (the ES module sets tg_folded, docs/wgsl.md): the workgroups are numbered x fastest and the
  // number decoded into the grid's (x, y, z); those past the grid return. The condition is
  // uniform (an override, workgroup_id, num_workgroups): barriers below stay legal. With
  // tg_folded false, the pipeline's compiler removes all of it.
  std::string extent[3] = {"1u", "1u", "1u"};
  for (size_t d = 0; d < k_.grid.size(); ++d)
    extent[d] = "u32(" + expr(k_.grid[d].extent) + ")";
  line("var tg_blk = vec3<i32>(tg_wid);");
  open("if (tg_folded)");
  line("let tg_g = vec3<u32>(" + extent[0] + ", " + extent[1] + ", " + extent[2] + ");");
  line("let tg_n = tg_wid.x + tg_nwg.x * (tg_wid.y + tg_nwg.y * tg_wid.z);");
  line("if (tg_n >= tg_g.x * tg_g.y * tg_g.z) { return; }");
  line("tg_blk = vec3<i32>(vec3<u32>(tg_n % tg_g.x, tg_n / tg_g.x % tg_g.y, tg_n / (tg_g.x * tg_g.y)));");
  close();
  const char* axis[] = {"x", "y", "z"};
  for (size_t d = 0; d < k_.grid.size(); ++d)
    line("let " + name(k_.grid[d].index->name) + " = tg_blk." + axis[d] + ";");
  if (red_slots_ && target_.wgsl.subgroups) {
    // Row reductions shuffle between lanes tx ^ o of a subgroup, which is right only where
    // lane l of a subgroup is local invocation base + l (true of every implementation seen,
    // but not promised by WGSL): checked here, once; elsewhere the tree path runs.
    line("let tg_sg_base = subgroupShuffle(tg_lid, 0u);");
    line("if (tg_sg_lane != tg_lid % tg_sg_size || tg_sg_base != tg_lid - tg_sg_lane) { atomicOr(&tg_sg_bad, 1u); }");
    line("workgroupBarrier();");
    line("if (tg_lid == 0u) { tg_sg_mode = atomicLoad(&tg_sg_bad); }");
    line("let tg_sg_fast = workgroupUniformLoad(&tg_sg_mode) == 0u;");
  }
  class Allocs : public IRVisitor {
  public:
    std::vector<BufferPtr> bufs;

  protected:
    void visit_Alloc(const Alloc* n) override { bufs.push_back(n->buffer); }
  } allocs;
  allocs.visit(k_.body);
  for (const auto& b : allocs.bufs)
    if (place(b) == WgslPlace::Registers)
      line("var " + name(b->name) + ": array<" + type_name(b->dtype) + ", " +
           std::to_string(imm(b->shape[0]) / layout_.ty * (imm(b->shape[1]) / layout_.tx)) +
           ">; // fragment " + std::to_string(imm(b->shape[0])) + " x " +
           std::to_string(imm(b->shape[1])) + ": rows tg_ty + TG_TY*a, cols tg_tx + TG_TX*b");
  line();
  stmt(k_.body);
  close();
}

std::string emit_wgsl_variant(const Kernel& k, const Target& target, const VariantInfo& info) {
  TG_ASSERT(target.backend == Backend::WGSL, "emit_wgsl_variant: target '" + target.name + "' is not WGSL");
  TG_ASSERT(!k.target.empty(), "emit_variant: kernel '" + k.name + "' is not instantiated");
  return WgslEmitter(k, target, info).run();
}

} // namespace tilegen::emit
