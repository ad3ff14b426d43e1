#include "tune/TuneFill.h"

#include "ir/IRPrinter.h"
#include "passes/ScheduleResolver.h"
#include "spec/ExprParser.h"
#include "support/Strings.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace tilegen::tune {

using spec::EKind;
using spec::SExpr;

namespace {

// (Built piece by piece: GCC 12's -Wrestrict false positive on "literal" + string, bug 105329.)
std::string axis_name(size_t a) {
  std::string s = "i";
  s += std::to_string(a);
  return s;
}
std::string quoted(const std::string& t) {
  std::string s = "'";
  s += t;
  s += "'";
  return s;
}

// The names EXPR may use, in one place: a runtime dim or value param of the kernel, or the
// element's index on an axis of the tensor.
std::vector<std::string> visible_names(const ir::Kernel& k, const ir::Buffer& t) {
  std::vector<std::string> names;
  for (const auto& d : k.dims)
    names.push_back(d.var->name);
  for (size_t a = 0; a < t.rank(); ++a)
    names.push_back(axis_name(a));
  return names;
}

bool check_expr(const SExpr& e, const std::vector<std::string>& names, DiagEngine& diag) {
  switch (e.kind) {
  case EKind::Int:
  case EKind::Bool:
    return true;
  case EKind::Float:
    diag.error(e.op_loc, "--fill: '" + e.text() +
                             "' is a float; the values of --fill are integers (an index "
                             "tensor's elements)");
    return false;
  case EKind::Name:
    if (std::find(names.begin(), names.end(), e.name) == names.end()) {
      std::string hint = closest_name(e.name, names);
      std::vector<std::string> params, axes;
      for (const auto& n : names)
        (n.size() > 1 && n[0] == 'i' && std::isdigit(static_cast<unsigned char>(n[1])) ? axes
                                                                                        : params)
            .push_back(n);
      diag.error(e.op_loc, "--fill: unknown name '" + e.name + "'" +
                               (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                               "; EXPR may use the kernel's dims and value params (" +
                               join(params, ", ") + ") and the element's index on each axis (" +
                               join(axes, ", ") + ")");
      return false;
    }
    return true;
  case EKind::Index:
    diag.error(e.op_loc, "--fill: '" + e.name +
                             "[...]' reads a tensor; EXPR may use only dims, value params "
                             "and the element's index (i0, i1, ...)");
    return false;
  case EKind::Call: {
    const bool two = e.name == "min" || e.name == "max" || e.name == "cdiv";
    if (!two && e.name != "abs") {
      diag.error(e.op_loc, "--fill: '" + e.name +
                               "' is not available in --fill; its functions are min, max, "
                               "cdiv and abs");
      return false;
    }
    if (e.args.size() != (two ? 2u : 1u)) {
      diag.error(e.op_loc, "--fill: " + e.name + " takes " + (two ? "2 arguments" : "1 argument") +
                               ", not " + std::to_string(e.args.size()));
      return false;
    }
    break;
  }
  default:
    break;
  }
  for (const auto& a : e.args)
    if (!check_expr(*a, names, diag))
      return false;
  return true;
}

// The spec's integer semantics in 64 bits (docs/spec.md): floor division and modulo with
// `a / 0 = 0`, `a % 0 = a`, INT64_MIN / -1 wrapping; shifts defined for every count; other
// overflow an error (as in constant arithmetic).
struct Evaluator {
  const std::map<std::string, int64_t>& env;
  DiagEngine& diag;
  bool ok = true;

  int64_t fail(const SExpr& e, const std::string& what) {
    if (ok)
      diag.error(e.loc, "--fill: " + what);
    ok = false;
    return 0;
  }

  static int64_t floor_div(int64_t a, int64_t b) {
    if (b == 0)
      return 0;
    if (a == std::numeric_limits<int64_t>::min() && b == -1)
      return a;
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
      --q;
    return q;
  }
  static int64_t floor_mod(int64_t a, int64_t b) {
    if (b == 0)
      return a;
    if (b == -1)
      return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
      r += b;
    return r;
  }

  int64_t eval(const SExpr& e) {
    if (!ok)
      return 0;
    switch (e.kind) {
    case EKind::Int: return e.ival;
    case EKind::Bool: return e.bval ? 1 : 0;
    case EKind::Name: {
      auto it = env.find(e.name);
      if (it == env.end()) // (check_fill admits only names the caller binds)
        return fail(e, "'" + e.name + "' has no value at this shape");
      return it->second;
    }
    case EKind::Unary: {
      int64_t a = eval(*e.args[0]);
      if (e.op == "!")
        return a == 0;
      if (e.op == "~")
        return ~a;
      if (a == std::numeric_limits<int64_t>::min())
        return fail(e, quoted(e.text()) + " overflows 64 bits");
      return -a;
    }
    case EKind::Ternary: {
      int64_t c = eval(*e.args[0]);
      return c ? eval(*e.args[1]) : eval(*e.args[2]);
    }
    case EKind::Call: {
      int64_t a = eval(*e.args[0]);
      if (e.name == "abs") {
        if (a == std::numeric_limits<int64_t>::min())
          return fail(e, quoted(e.text()) + " overflows 64 bits");
        return a < 0 ? -a : a;
      }
      int64_t b = eval(*e.args[1]);
      if (e.name == "min")
        return std::min(a, b);
      if (e.name == "max")
        return std::max(a, b);
      // cdiv(a, b) = -floor(-a / b), 0 for b = 0
      if (b == 0)
        return 0;
      if (a == std::numeric_limits<int64_t>::min())
        return fail(e, quoted(e.text()) + " overflows 64 bits");
      return -floor_div(-a, b);
    }
    case EKind::Binary: {
      if (e.op == "&&") {
        int64_t a = eval(*e.args[0]);
        return a ? eval(*e.args[1]) != 0 : 0;
      }
      if (e.op == "||") {
        int64_t a = eval(*e.args[0]);
        return a ? 1 : eval(*e.args[1]) != 0;
      }
      int64_t a = eval(*e.args[0]), b = eval(*e.args[1]), r = 0;
      const std::string& op = e.op;
      if (op == "+" || op == "-" || op == "*") {
        bool over = op == "+"   ? __builtin_add_overflow(a, b, &r)
                    : op == "-" ? __builtin_sub_overflow(a, b, &r)
                                : __builtin_mul_overflow(a, b, &r);
        if (over)
          return fail(e, quoted(e.text()) + " overflows 64 bits (" + std::to_string(a) + " " +
                             op + " " + std::to_string(b) + ")");
        return r;
      }
      if (op == "/") return floor_div(a, b);
      if (op == "%") return floor_mod(a, b);
      if (op == "<") return a < b;
      if (op == "<=") return a <= b;
      if (op == ">") return a > b;
      if (op == ">=") return a >= b;
      if (op == "==") return a == b;
      if (op == "!=") return a != b;
      if (op == "&") return a & b;
      if (op == "|") return a | b;
      if (op == "^") return a ^ b;
      if (op == "<<")
        return b < 0 || b >= 64 ? 0 : int64_t(uint64_t(a) << b);
      if (op == ">>")
        return b < 0 || b >= 64 ? (a < 0 ? -1 : 0) : a >> b;
      return fail(e, "operator '" + op + "' is not available in --fill");
    }
    default:
      return fail(e, quoted(e.text()) + " cannot be evaluated by --fill");
    }
  }
};

} // namespace

const ir::Buffer* filled_tensor(const Fill& f, const ir::Kernel& k) {
  for (const auto& t : k.tensors)
    if (t->name == f.tensor)
      return t.get();
  return nullptr;
}

std::optional<Fill> parse_fill(const std::string& arg, int ordinal, DiagEngine& diag) {
  // The option's text is the "file" of its diagnostics, so a caret points into it.
  auto file = diag.add_source("--fill #" + std::to_string(ordinal), arg);
  SourceLoc whole{file, 1, 1, static_cast<int>(std::max<size_t>(arg.size(), 1))};
  size_t eq = arg.find('=');
  std::string name = eq == std::string::npos ? arg : arg.substr(0, eq);
  while (!name.empty() && name.back() == ' ')
    name.pop_back();
  if (eq == std::string::npos || name.empty() || eq + 1 >= arg.size() ||
      !spec::is_identifier(name)) {
    diag.error(whole, "--fill: give TENSOR=EXPR, an integer expression for the tensor's "
                      "elements (e.g. 'seq_lens=MP * PAGE', 'block_table=(i0 * MP + i1) % NP'; "
                      "docs/tune.md)");
    return std::nullopt;
  }
  spec::LocMapper loc = [file, eq](size_t off, size_t len) {
    return SourceLoc{file, 1, static_cast<int>(eq + 2 + off),
                     static_cast<int>(std::max<size_t>(len, 1))};
  };
  auto expr = spec::parse_expr(std::string_view(arg).substr(eq + 1), loc, diag);
  if (!expr)
    return std::nullopt;
  return Fill{name, expr, whole};
}

bool check_fill(const Fill& f, const ir::Kernel& k, DiagEngine& diag) {
  const ir::Buffer* t = filled_tensor(f, k);
  if (!t) {
    std::vector<std::string> names;
    for (const auto& x : k.tensors)
      names.push_back(x->name);
    std::string hint = closest_name(f.tensor, names);
    diag.error(f.loc, "--fill: kernel '" + k.name + "' has no tensor '" + f.tensor + "'" +
                          (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                          "; its tensors: " + join(names, ", "));
    return false;
  }
  if (!t->dtype.is_int() || t->packed != ir::Packed::None) {
    diag.error(f.loc, "--fill: tensor '" + t->name + "' holds " +
                          (t->packed != ir::Packed::None ? std::string(ir::packed_name(t->packed))
                                                         : std::string(t->dtype.name())) +
                          "; --fill gives the values of tensors of unpacked integer types "
                          "(indices, lengths, offsets), the harness fills the others");
    return false;
  }
  for (const auto& d : k.dims)
    for (size_t a = 0; a < t->rank(); ++a)
      if (d.var->name == axis_name(a)) {
        diag.error(f.loc, "--fill: '" + d.var->name + "' is both a param of kernel '" + k.name +
                              "' and the index of axis " + std::to_string(a) + " of '" +
                              t->name + "': rename the param to use --fill on this tensor");
        return false;
      }
  return check_expr(*f.expr, visible_names(k, *t), diag);
}

bool eval_fill(const Fill& f, const ir::Kernel& k, const std::map<std::string, int64_t>& dims,
               std::vector<int64_t>& out, DiagEngine& diag) {
  const ir::Buffer* t = filled_tensor(f, k);
  ir::VarMap m;
  for (const auto& d : k.dims)
    if (dims.count(d.var->name))
      m[d.var.get()] = ir::make_i64(dims.at(d.var->name));
  std::vector<int64_t> ext;
  int64_t n = 1;
  for (const auto& e : t->shape) {
    auto v = passes::fold_with(e, m);
    if (!v || *v < 0) {
      diag.error(f.loc, "--fill: the extent " + ir::to_string(e) + " of tensor '" + t->name +
                            "' does not fold at a tuned shape");
      return false;
    }
    ext.push_back(*v);
    if (__builtin_mul_overflow(n, *v, &n) || n > kMaxFillElements) {
      diag.error(f.loc, "--fill: tensor '" + t->name + "' has more than " +
                            std::to_string(kMaxFillElements) +
                            " elements at a tuned shape; --fill is for index tensors");
      return false;
    }
  }
  std::map<std::string, int64_t> env = dims;
  std::vector<int64_t*> idx;
  for (size_t a = 0; a < ext.size(); ++a)
    idx.push_back(&(env[axis_name(a)] = 0));
  // The range of the element type (u64 is capped at INT64_MAX: the values are int64).
  const ir::DType ty = t->dtype;
  const int bits = ty.bits();
  const int64_t lo = ty.is_unsigned() ? 0 : bits >= 64 ? std::numeric_limits<int64_t>::min()
                                                       : -(int64_t(1) << (bits - 1));
  const int64_t hi = bits >= 64 ? std::numeric_limits<int64_t>::max()
                                : ty.is_unsigned() ? (int64_t(1) << bits) - 1
                                                   : (int64_t(1) << (bits - 1)) - 1;
  out.assign(static_cast<size_t>(n), 0);
  Evaluator ev{env, diag};
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t rest = flat;
    for (size_t a = ext.size(); a-- > 0;) {
      *idx[a] = rest % ext[a];
      rest /= ext[a];
    }
    int64_t v = ev.eval(*f.expr);
    if (!ev.ok)
      return false;
    if (v < lo || v > hi) {
      std::string at;
      for (size_t a = 0; a < ext.size(); ++a)
        at += (a ? ", " : "") + std::to_string(*idx[a]);
      diag.error(f.loc, "--fill: the value " + std::to_string(v) + " of " + t->name + "[" + at +
                            "] does not fit " + std::string(ty.name()) + " [" + std::to_string(lo) +
                            ", " + std::to_string(hi) + "]");
      return false;
    }
    out[static_cast<size_t>(flat)] = v;
  }
  return true;
}

std::string fill_bytes(const std::vector<int64_t>& values, ir::DType t) {
  const int w = t.bytes();
  std::string s(values.size() * static_cast<size_t>(w), '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    uint64_t v = static_cast<uint64_t>(values[i]);
    for (int b = 0; b < w; ++b)
      s[i * w + b] = static_cast<char>((v >> (8 * b)) & 0xff);
  }
  return s;
}

} // namespace tilegen::tune
