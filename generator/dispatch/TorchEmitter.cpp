// <lib>_torch.cpp: a fixed part (kRuntime: dtype names, the type-binding choice, shape and
// device checks, the launch of torch's current stream and device, status -> exception) plus,
// per operator, a `prepare` (binding, dims from the inputs' sizes, shape checks; templated on
// the integer type so that the Meta kernel traces with SymInts on PyTorch >= 2), a `run` (the C
// call of the chosen binding), the functional, `.out` and Meta kernels, and the registrations.
// Names local to generated code start with tg_ (spec names cannot), parameters that carry a spec
// tensor are tg_in_<name>.
#include "dispatch/TorchEmitter.h"
#include "support/Strings.h"

#include "dispatch/DispatchExpr.h"
#include "dispatch/Naming.h"
#include "support/InternalError.h"
#include "support/TextEscape.h"

#include <set>
#include <sstream>

namespace tilegen::dispatch {

using namespace ir;

std::string torch_file_name(const std::string& lib) { return lib + "_torch.cpp"; }

namespace {


// A C++ string literal of generated text (names, spec expressions).
std::string lit(const std::string& s) { return "\"" + c_string_body(s) + "\""; }

// The at::ScalarType of a dtype; float8 types exist from PyTorch 2.1 on (TG_TORCH_FLOAT8).
std::string scalar_type(DType t) {
  switch (t.kind) {
  case ScalarKind::F32: return "at::ScalarType::Float";
  case ScalarKind::F64: return "at::ScalarType::Double";
  case ScalarKind::F16: return "at::ScalarType::Half";
  case ScalarKind::BF16: return "at::ScalarType::BFloat16";
  case ScalarKind::I8: return "at::ScalarType::Char";
  case ScalarKind::I32: return "at::ScalarType::Int";
  case ScalarKind::I64: return "at::ScalarType::Long";
  case ScalarKind::E4M3: return "at::ScalarType::Float8_e4m3fn";
  case ScalarKind::E5M2: return "at::ScalarType::Float8_e5m2";
  case ScalarKind::U8: return "at::ScalarType::Byte";
  case ScalarKind::U16:
  case ScalarKind::U32:
  case ScalarKind::U64: // check_torch refuses them
  case ScalarKind::Bool: break;
  }
  internal_error("torch binding: tensor of dtype " + std::string(t.name()));
}

bool is_float8(DType t) { return t.kind == ScalarKind::E4M3 || t.kind == ScalarKind::E5M2; }

std::string shape_text(const BufferPtr& t) {
  std::vector<std::string> v;
  for (const auto& e : t->shape)
    v.push_back(spec_expr(e));
  return "[" + join(v, ", ") + "]";
}

// One operator: a kernel's type bindings that its input dtypes tell apart (or one binding).
struct Op {
  std::string name;                    // gemm, or gemm_f32 for split bindings
  std::vector<const KernelEntry*> bindings;
  const Kernel& k() const { return *bindings.front()->kernel; }
};

// The tensors a call's dims and binding come from: read and readwrite tensors (spec order);
// a kernel that reads no tensor takes them from its outputs (it has only the .out overload).
std::vector<BufferPtr> sources(const Kernel& k) {
  std::vector<BufferPtr> v;
  for (const auto& t : k.tensors)
    if (t->access != Access::Write)
      v.push_back(t);
  return v.empty() ? k.tensors : v;
}
bool has_functional(const Kernel& k) {
  for (const auto& t : k.tensors)
    if (t->access != Access::Write)
      return true;
  return false;
}
std::vector<BufferPtr> written(const Kernel& k) {
  std::vector<BufferPtr> v;
  for (const auto& t : k.tensors)
    if (t->access != Access::Read)
      v.push_back(t);
  return v;
}

// Where each dim comes from: (source tensor, axis) of the first axis that is exactly that dim,
// else an explicit `int` argument of the operator.
struct DimSource {
  const DimParam* dim;
  BufferPtr tensor; // null: explicit argument
  size_t axis = 0;
};
std::vector<DimSource> dim_sources(const Kernel& k) {
  std::vector<DimSource> out;
  for (const auto& d : k.dims) {
    DimSource s{&d, nullptr, 0};
    for (const auto& t : sources(k)) {
      for (size_t a = 0; a < t->shape.size() && !s.tensor; ++a)
        if (auto* v = t->shape[a]->as<VarRef>(); v && v->var == d.var) {
          s.tensor = t;
          s.axis = a;
        }
      if (s.tensor)
        break;
    }
    out.push_back(s);
  }
  return out;
}

std::string schema_scalar_type(DType t) { return t.is_int() ? "int" : "float"; }
std::string cpp_scalar_type(DType t) { return t.is_int() ? "int64_t" : "double"; }

// The scalar as the C function takes it, from the operator's double / int64_t.
std::string scalar_value(const Var& s, const std::string& op) {
  const std::string n = s.name;
  switch (s.type.kind) {
  case ScalarKind::F32: return "static_cast<float>(" + n + ")";
  case ScalarKind::F64: return n;
  case ScalarKind::F16: return "tg_float_to_f16(static_cast<float>(" + n + "))";
  case ScalarKind::BF16: return "tg_float_to_bf16(static_cast<float>(" + n + "))";
  case ScalarKind::E4M3: return "tg_float_to_e4m3(static_cast<float>(" + n + "))";
  case ScalarKind::E5M2: return "tg_float_to_e5m2(static_cast<float>(" + n + "))";
  case ScalarKind::I8: return "tg_int_scalar<int8_t>(" + lit(op) + ", " + lit(n) + ", " + n + ")";
  case ScalarKind::I32: return "tg_int_scalar<int32_t>(" + lit(op) + ", " + lit(n) + ", " + n + ")";
  case ScalarKind::I64: return n;
  case ScalarKind::U8:
  case ScalarKind::U16:
  case ScalarKind::U32:
    return "tg_int_scalar<" + std::string(c_type_name(s.type)) + ">(" + lit(op) + ", " + lit(n) +
           ", " + n + ")";
  case ScalarKind::U64: // check_torch refuses it
  case ScalarKind::Bool: break;
  }
  internal_error("torch binding: scalar of dtype " + std::string(s.type.name()));
}

// An axis of a tensor shape as tg_I: a dim or literal directly (symbolic when tracing), any
// other expression from the dims' concrete values with the checked int64 helpers.
std::string axis_expr(const Expr& e, const Kernel& k, const std::string& op) {
  if (auto* i = e->as<IntImm>())
    return "tg_I(INT64_C(" + std::to_string(i->value) + "))";
  if (auto* v = e->as<VarRef>())
    return "tg_c." + v->var->name;
  std::string s = "tg_axis<tg_I>(" + lit(op) + ", [&](int* tg_ok) {";
  for (const auto& d : k.dims)
    s += " const int64_t " + d.var->name + " = tg_concrete(tg_c." + d.var->name + "); (void)" +
         d.var->name + ";";
  std::string c = c_shape_expr(e, "tg_ok_v");
  return s + " int tg_ok_v = 1; int64_t tg_v = " + c + "; *tg_ok = tg_ok_v; return tg_v; })";
}

std::string shape_vector(const BufferPtr& t, const Kernel& k, const std::string& op) {
  std::vector<std::string> v;
  for (const auto& e : t->shape)
    v.push_back(axis_expr(e, k, op));
  return "tg_shape<tg_I>{" + join(v, ", ") + "}";
}

std::string alias(size_t i) {
  return i < 26 ? std::string(1, static_cast<char>('a' + i)) : "a" + std::to_string(i);
}

// The fixed part of every binding file.
const char* kRuntime = R"CPP(
namespace {

// The integer of traced shapes: c10::SymInt on PyTorch >= 2 (torch.compile may trace with
// symbolic sizes), int64_t before.
#ifdef TG_TORCH_SYMINT
using tg_sym = c10::SymInt;
#else
using tg_sym = int64_t;
#endif

// A shape without a heap allocation (ranks up to 8 in place).
template <class tg_I> using tg_shape = c10::SmallVector<tg_I, 8>;

template <class tg_I> tg_I tg_size(const at::Tensor& t, int64_t d);
template <> inline int64_t tg_size<int64_t>(const at::Tensor& t, int64_t d) { return t.size(d); }
inline int64_t tg_concrete(int64_t v) { return v; }
inline at::Tensor tg_empty(const tg_shape<int64_t>& shape, const at::TensorOptions& o) {
  return at::empty(shape, o);
}
#ifdef TG_TORCH_SYMINT
template <> inline c10::SymInt tg_size<c10::SymInt>(const at::Tensor& t, int64_t d) {
  return t.sym_size(d);
}
inline int64_t tg_concrete(const c10::SymInt& v) { return v.guard_int(__FILE__, __LINE__); }
inline at::Tensor tg_empty(const tg_shape<c10::SymInt>& shape, const at::TensorOptions& o) {
  return at::empty_symint(shape, o);
}
#endif

std::string tg_dtype_name(at::ScalarType s) {
  switch (s) {
  case at::ScalarType::Float: return "torch.float32";
  case at::ScalarType::Double: return "torch.float64";
  case at::ScalarType::Half: return "torch.float16";
  case at::ScalarType::BFloat16: return "torch.bfloat16";
  case at::ScalarType::Char: return "torch.int8";
  case at::ScalarType::Int: return "torch.int32";
  case at::ScalarType::Long: return "torch.int64";
  case at::ScalarType::Byte: return "torch.uint8";
#ifdef TG_TORCH_FLOAT8
  case at::ScalarType::Float8_e4m3fn: return "torch.float8_e4m3fn";
  case at::ScalarType::Float8_e5m2: return "torch.float8_e5m2";
#endif
  default: return std::string("torch.") + c10::toString(s);
  }
}

std::string tg_shape_str(const at::Tensor& t) {
  std::ostringstream os;
#ifdef TG_TORCH_SYMINT
  os << t.sym_sizes();
#else
  os << t.sizes();
#endif
  return os.str();
}

template <class tg_I> std::string tg_ints_str(const tg_shape<tg_I>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i)
    os << (i ? ", " : "") << v[i];
  os << "]";
  return os.str();
}

// The type binding whose input dtypes are the inputs' (rows: n_bind x n_in; a binding this
// PyTorch has no dtype for has at::ScalarType::Undefined). TypeError naming the first input
// that no remaining binding takes, and what it could have been.
int tg_pick_binding(const char* op, int n_in, const char* const* names,
                    const at::Tensor* const* inputs, int n_bind, const at::ScalarType* rows,
                    const char* unusable) {
  // The call path: the first binding whose row is the inputs' dtypes (no allocation).
  for (int b = 0; b < n_bind; ++b) {
    int i = 0;
    while (i < n_in && rows[b * n_in + i] == inputs[i]->scalar_type())
      ++i;
    if (i == n_in)
      return b;
  }
  // No binding: say which input no remaining binding takes, and what it could have been.
  std::vector<int> cand;
  for (int b = 0; b < n_bind; ++b)
    if (rows[b * n_in] != at::ScalarType::Undefined)
      cand.push_back(b);
  if (cand.empty())
    C10_THROW_ERROR(NotImplementedError,
                    std::string(op) + ": no type binding can run with this PyTorch (" + unusable + ")");
  std::string given;
  for (int i = 0; i < n_in; ++i) {
    const at::ScalarType dt = inputs[i]->scalar_type();
    std::vector<int> next;
    std::vector<at::ScalarType> expected;
    for (int b : cand) {
      const at::ScalarType r = rows[b * n_in + i];
      if (r == dt)
        next.push_back(b);
      if (std::find(expected.begin(), expected.end(), r) == expected.end())
        expected.push_back(r);
    }
    if (next.empty()) {
      std::string msg = std::string(op) + ": " + names[i] + " has dtype " + tg_dtype_name(dt) +
                        ", expected " + (expected.size() > 1 ? "one of " : "");
      for (size_t e = 0; e < expected.size(); ++e)
        msg += (e ? ", " : "") + tg_dtype_name(expected[e]);
      if (!given.empty())
        msg += " (given " + given + ")";
      if (*unusable)
        msg += std::string("; ") + unusable;
      C10_THROW_ERROR(TypeError, msg);
    }
    given += (given.empty() ? "" : ", ") + std::string(names[i]) + " of " + tg_dtype_name(dt);
    cand = next;
  }
  return cand.front();
}

void tg_check_device(const char* op, const char* first_name, const at::Tensor& first,
                     const char* name, const at::Tensor& t) {
  TORCH_CHECK(t.device() == first.device(), op, ": ", name, " is on ", t.device(), ", expected ",
              first.device(), " like ", first_name, " (all tensors of a call on one device)");
}

void tg_check_rank(const char* op, const char* name, const at::Tensor& t, int64_t rank,
                   const char* spec_shape) {
  TORCH_CHECK_VALUE(t.dim() == rank, op, ": ", name, " must have ", rank, " dimensions ",
                    spec_shape, ", got shape ", tg_shape_str(t));
}

template <class tg_I>
void tg_check_shape(const char* op, const char* name, const at::Tensor& t,
                    const tg_shape<tg_I>& expected, const char* spec_shape, const char* dims) {
  bool same = true;
  for (size_t a = 0; a < expected.size(); ++a)
    same = same && tg_size<tg_I>(t, static_cast<int64_t>(a)) == expected[a];
  TORCH_CHECK_VALUE(same, op, ": ", name, " has shape ", tg_shape_str(t), ", expected ", spec_shape,
                    " = ", tg_ints_str(expected), " (", dims, ")");
}

// An output passed to .out: same device as the inputs, the binding's dtype, the spec's shape,
// contiguous (a kernel writes dense row-major memory; no copy-back is made).
template <class tg_I>
void tg_check_out(const char* op, const char* name, const at::Tensor& t, const char* like_name,
                  const at::Tensor& like, at::ScalarType dtype, const tg_shape<tg_I>& expected,
                  const char* spec_shape, const char* dims) {
  tg_check_device(op, like_name, like, name, t);
  TORCH_CHECK_TYPE(t.scalar_type() == dtype, op, ": ", name, " has dtype ",
                   tg_dtype_name(t.scalar_type()), ", expected ", tg_dtype_name(dtype));
  TORCH_CHECK_VALUE(t.dim() == static_cast<int64_t>(expected.size()), op, ": ", name, " must have ",
                    expected.size(), " dimensions ", spec_shape, ", got shape ", tg_shape_str(t));
  tg_check_shape<tg_I>(op, name, t, expected, spec_shape, dims);
  TORCH_CHECK_VALUE(t.is_contiguous(), op, ": ", name,
                    " (an output) must be contiguous; pass a contiguous tensor or use the "
                    "functional form");
}

template <class tg_I, class F> tg_I tg_axis(const char* op, F f) {
  int ok = 1;
  const int64_t v = f(&ok);
  TORCH_CHECK_VALUE(ok, op, ": a tensor shape expression overflows 64 bits");
  return tg_I(v);
}

template <class T> T tg_int_scalar(const char* op, const char* name, int64_t v) {
  TORCH_CHECK_VALUE(v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max(), op,
                    ": ", name, " = ", v, " does not fit its C type");
  return static_cast<T>(v);
}

// The launch of a call on `t`'s device: torch's current stream there, or the CPU variants with
// torch's intra-op thread count.
tg_launch tg_launch_for(const at::Tensor& t) {
  tg_launch l{};
  l.struct_size = sizeof l;
  l.device = -1;
  if (t.is_cuda()) {
#ifdef TILEGEN_TORCH_CUDA
    l.device = t.get_device();
    l.stream = c10::cuda::getCurrentCUDAStream(t.get_device()).stream();
#else
    TORCH_CHECK(false, "this tilegen library was built without CUDA targets");
#endif
  } else {
    l.num_threads = at::get_num_threads();
  }
  return l;
}

// A call that did not return TG_OK: the query's reason, as ValueError for what
// the arguments' values break (dims, scalars' require), RuntimeError otherwise.
[[noreturn]] void tg_fail_status(const char* op, tg_status st, const tg_selection& q) {
  // The query's reason names the argument and the rule; the status's sentence if it has none.
  std::string msg = std::string(op) + ": " + (q.reason[0] ? q.reason : tg_status_string(st));
  if (st == TG_ERR_INVALID_DIM || st == TG_ERR_UNSUPPORTED_SHAPE || st == TG_ERR_INVALID_ARGUMENT ||
      st == TG_ERR_SIZE_OVERFLOW)
    C10_THROW_ERROR(ValueError, msg);
  C10_THROW_ERROR(Error, msg);
}

} // namespace
)CPP";

struct OpEmitter {
  const std::string& lib;
  const Op& op;
  std::ostringstream& os;

  const Kernel& k() const { return op.k(); }
  std::string qual() const { return lib + "." + op.name; }
  std::string pre() const { return "tg_" + op.name; }

  std::string dims_text() const {
    std::vector<std::string> v;
    for (const auto& s : dim_sources(k()))
      v.push_back(s.dim->var->name + (s.tensor ? " = " + s.tensor->name + ".shape[" +
                                                     std::to_string(s.axis) + "]"
                                               : " given"));
    return join(v, ", ");
  }

  // Parameters of prepare (and of every kernel function): source tensors, explicit dims.
  std::vector<BufferPtr> srcs() const { return sources(k()); }
  std::vector<const DimParam*> explicit_dims() const {
    std::vector<const DimParam*> v;
    for (const auto& s : dim_sources(k()))
      if (!s.tensor)
        v.push_back(s.dim);
    return v;
  }

  void emit_prepare() {
    const Kernel& kk = k();
    auto src = srcs();
    os << "template <class tg_I> struct " << pre() << "_call {\n  int tg_binding = -1;\n";
    for (const auto& d : kk.dims)
      os << "  tg_I " << d.var->name << "{};\n";
    os << "};\n\n";
    os << "template <class tg_I>\n" << pre() << "_call<tg_I> " << pre() << "_prepare(";
    std::vector<std::string> params;
    for (const auto& t : src)
      params.push_back("const at::Tensor& tg_in_" + t->name);
    for (const DimParam* d : explicit_dims())
      params.push_back("int64_t " + d->var->name);
    os << join(params, ", ") << ") {\n";
    os << "  const char* tg_op = " << lit(qual()) << ";\n";
    std::vector<std::string> names, ptrs, rows;
    for (const auto& t : src) {
      names.push_back(lit(t->name));
      ptrs.push_back("&tg_in_" + t->name);
    }
    std::vector<std::string> unusable;
    for (const KernelEntry* b : op.bindings) {
      bool f8 = false;
      for (const auto& t : sources(*b->kernel))
        f8 = f8 || is_float8(t->dtype);
      for (const auto& t : b->kernel->tensors)
        f8 = f8 || is_float8(t->dtype);
      std::vector<std::string> row;
      for (const auto& t : sources(*b->kernel))
        row.push_back(scalar_type(t->dtype));
      std::string r = join(row, ", ");
      if (f8) {
        std::vector<std::string> undef(row.size(), "at::ScalarType::Undefined");
        r = "\n#ifdef TG_TORCH_FLOAT8\n      " + r + ",\n#else\n      " + join(undef, ", ") +
            ",\n#endif\n     ";
        unusable.push_back(b->kernel->type_suffix());
      } else {
        r += ",";
      }
      rows.push_back(r);
    }
    std::string unusable_text =
        unusable.empty() ? ""
                         : "the binding" + std::string(unusable.size() > 1 ? "s " : " ") +
                               join(unusable, ", ") + " need" + (unusable.size() > 1 ? "" : "s") +
                               " PyTorch >= 2.1 for float8 dtypes";
    os << "  static const char* const tg_names[] = {" << join(names, ", ") << "};\n";
    os << "  const at::Tensor* const tg_inputs[] = {" << join(ptrs, ", ") << "};\n";
    os << "  static const at::ScalarType tg_rows[] = {";
    for (const auto& r : rows)
      os << " " << r;
    os << "};\n";
    os << "#ifdef TG_TORCH_FLOAT8\n  const char* tg_unusable = \"\";\n#else\n  const char* tg_unusable = "
       << lit(unusable_text) << ";\n#endif\n";
    os << "  " << pre() << "_call<tg_I> tg_c;\n";
    os << "  tg_c.tg_binding = tg_pick_binding(tg_op, " << src.size() << ", tg_names, tg_inputs, "
       << op.bindings.size() << ", tg_rows, tg_unusable);\n";
    for (size_t i = 1; i < src.size(); ++i)
      os << "  tg_check_device(tg_op, " << lit(src[0]->name) << ", tg_in_" << src[0]->name << ", "
         << lit(src[i]->name) << ", tg_in_" << src[i]->name << ");\n";
    for (const auto& t : src)
      os << "  tg_check_rank(tg_op, " << lit(t->name) << ", tg_in_" << t->name << ", "
         << t->shape.size() << ", " << lit(shape_text(t)) << ");\n";
    for (const auto& s : dim_sources(kk)) {
      const std::string& n = s.dim->var->name;
      if (s.tensor)
        os << "  tg_c." << n << " = tg_size<tg_I>(tg_in_" << s.tensor->name << ", " << s.axis
           << ");\n";
      else { // an argument: checked before it sizes an output (the C API checks it again)
        std::vector<std::string> conds = {n + " >= 0"};
        std::string rule = ">= 0";
        if (s.dim->min) {
          conds.push_back(n + " >= " + std::to_string(*s.dim->min));
          rule += ", >= " + std::to_string(*s.dim->min);
        }
        if (s.dim->max) {
          conds.push_back(n + " <= " + std::to_string(*s.dim->max));
          rule += ", <= " + std::to_string(*s.dim->max);
        }
        if (s.dim->multiple_of) {
          conds.push_back(n + " % " + std::to_string(*s.dim->multiple_of) + " == 0");
          rule += ", a multiple of " + std::to_string(*s.dim->multiple_of);
        }
        if (!s.dim->values.empty()) {
          std::vector<std::string> alts, vals;
          for (int64_t v : s.dim->values) {
            alts.push_back(n + " == " + std::to_string(v));
            vals.push_back(std::to_string(v));
          }
          conds.push_back("(" + join(alts, " || ") + ")");
          rule += ", one of " + join(vals, ", ");
        }
        os << "  TORCH_CHECK_VALUE(" << join(conds, " && ") << ", tg_op, \": " << n << " = \", "
           << n << ", \" must be " << rule << "\");\n";
        os << "  tg_c." << n << " = tg_I(" << n << ");\n";
      }
    }
    os << "  static const char* tg_dims = " << lit(dims_text()) << ";\n";
    for (const auto& t : src)
      os << "  tg_check_shape<tg_I>(tg_op, " << lit(t->name) << ", tg_in_" << t->name << ", "
         << shape_vector(t, kk, qual()) << ", " << lit(shape_text(t)) << ", tg_dims);\n";
    os << "  return tg_c;\n}\n\n";
  }

  // Parameters and argument names of the scalar / flag part of every kernel function.
  std::vector<std::string> tail_params() const {
    std::vector<std::string> v;
    for (const DimParam* d : explicit_dims())
      v.push_back("int64_t " + d->var->name);
    for (const auto& s : k().scalars)
      v.push_back(cpp_scalar_type(s->type) + " " + s->name);
    for (const auto& f : k().flags)
      v.push_back("bool " + f->name);
    return v;
  }
  std::vector<std::string> tail_args() const {
    std::vector<std::string> v;
    for (const DimParam* d : explicit_dims())
      v.push_back(d->var->name);
    for (const auto& s : k().scalars)
      v.push_back(s->name);
    for (const auto& f : k().flags)
      v.push_back(f->name);
    return v;
  }
  std::vector<std::string> src_args() const {
    std::vector<std::string> v;
    for (const auto& t : srcs())
      v.push_back("tg_in_" + t->name);
    return v;
  }

  void emit_run() {
    const Kernel& kk = k();
    std::vector<std::string> params = {"const " + pre() + "_call<int64_t>& tg_c",
                                       "const tg_launch* tg_l"};
    for (const auto& t : kk.tensors)
      params.push_back("const at::Tensor& " + t->name);
    for (const auto& s : kk.scalars)
      params.push_back(cpp_scalar_type(s->type) + " " + s->name);
    for (const auto& f : kk.flags)
      params.push_back("bool " + f->name);
    params.push_back("tg_selection* tg_query");
    os << "tg_status " << pre() << "_run(" << join(params, ", ") << ") {\n";
    // (a binding compiled out, float8 before PyTorch 2.1, leaves parameters unused)
    std::vector<std::string> voids = {"(void)tg_l;"};
    for (const auto& t : kk.tensors)
      voids.push_back("(void)" + t->name + ";");
    for (const auto& s : kk.scalars)
      voids.push_back("(void)" + s->name + ";");
    for (const auto& f : kk.flags)
      voids.push_back("(void)" + f->name + ";");
    voids.push_back("(void)tg_query;");
    os << "  " << join(voids, " ") << "\n";
    os << "  switch (tg_c.tg_binding) {\n";
    for (size_t b = 0; b < op.bindings.size(); ++b) {
      const Kernel& bk = *op.bindings[b]->kernel;
      bool f8 = false;
      for (const auto& t : bk.tensors)
        f8 = f8 || is_float8(t->dtype);
      if (f8)
        os << "#ifdef TG_TORCH_FLOAT8\n";
      os << "  case " << b << ": {\n";
      std::vector<std::string> args = {"tg_l"};
      for (const auto& t : bk.tensors) {
        std::string cty = c_type_name(t->dtype);
        bool ro = t->access == Access::Read;
        os << "    " << (ro ? "const " : "") << cty << "* tg_p_" << t->name << " = static_cast<"
           << (ro ? "const " : "") << cty << "*>(" << t->name << ".data_ptr());\n";
        args.push_back("tg_p_" + t->name);
      }
      for (const auto& d : bk.dims)
        args.push_back("tg_c." + d.var->name);
      for (const auto& s : bk.scalars)
        args.push_back(scalar_value(*s, qual()));
      for (const auto& f : bk.flags)
        args.push_back(f->name + " ? 1 : 0");
      std::string fn = public_function_name(lib, bk);
      std::string a = join(args, ", ");
      os << "    return tg_query ? " << fn << "_query(" << a << ", tg_query)\n"
         << "                    : " << fn << "(" << a << ");\n  }\n";
      if (f8)
        os << "#endif\n";
    }
    os << "  }\n  return TG_ERR_INTERNAL;\n}\n\n";
  }

  // The dtype of written tensor `t` in binding b (a readwrite tensor: its input's).
  std::string out_dtype_table(const BufferPtr& t) {
    std::vector<std::string> v;
    for (const KernelEntry* b : op.bindings)
      for (const auto& bt : b->kernel->tensors)
        if (bt->name == t->name)
          v.push_back(is_float8(bt->dtype) ? "TG_F8(" + scalar_type(bt->dtype) + ")"
                                           : scalar_type(bt->dtype));
    return "static const at::ScalarType tg_dt_" + t->name + "[] = {" + join(v, ", ") + "};";
  }

  std::string ret_type(bool ref) const {
    auto w = written(k());
    std::string t = ref ? "at::Tensor&" : "at::Tensor";
    if (w.size() == 1)
      return t;
    std::vector<std::string> v(w.size(), t);
    return "std::tuple<" + join(v, ", ") + ">";
  }
  std::string ret_value(bool ref) const {
    auto w = written(k());
    if (w.size() == 1)
      return w[0]->name;
    std::vector<std::string> v;
    for (const auto& t : w)
      v.push_back(t->name);
    return (ref ? "std::forward_as_tuple(" : "std::make_tuple(") + join(v, ", ") + ")";
  }

  // Functional, .out and their Meta twins; `meta` selects tg_sym for prepare and skips the run.
  void emit_functional(bool meta) {
    const Kernel& kk = k();
    std::vector<std::string> params;
    for (const auto& t : srcs())
      params.push_back("const at::Tensor& tg_in_" + t->name);
    for (auto& p : tail_params())
      params.push_back(p);
    os << ret_type(false) << " " << pre() << (meta ? "_meta" : "") << "(" << join(params, ", ")
       << ") {\n";
    os << "  using tg_I = " << (meta ? "tg_sym" : "int64_t") << ";\n";
    std::vector<std::string> pargs = src_args();
    for (const DimParam* d : explicit_dims())
      pargs.push_back(d->var->name);
    os << "  const auto tg_c = " << pre() << "_prepare<tg_I>(" << join(pargs, ", ") << ");\n";
    if (meta)
      emit_unused_tail();
    const auto first = "tg_in_" + srcs()[0]->name;
    for (const auto& t : kk.tensors) {
      if (t->access == Access::Read) {
        if (!meta)
          os << "  const at::Tensor " << t->name << " = tg_in_" << t->name << ".contiguous();\n";
        continue;
      }
      if (t->access == Access::ReadWrite) {
        os << "  at::Tensor " << t->name << " = tg_in_" << t->name
           << ".clone(at::MemoryFormat::Contiguous);\n";
        continue;
      }
      os << "  " << out_dtype_table(t) << "\n";
      os << "  at::Tensor " << t->name << " = tg_empty(" << shape_vector(t, kk, qual()) << ", "
         << first << ".options().dtype(tg_dt_" << t->name << "[tg_c.tg_binding]));\n";
    }
    if (!meta)
      emit_call_and_check(first);
    os << "  return " << ret_value(false) << ";\n}\n\n";
  }

  // A Meta kernel reads no scalar or flag.
  void emit_unused_tail() {
    std::vector<std::string> v;
    for (const auto& s : k().scalars)
      v.push_back("(void)" + s->name + ";");
    for (const auto& f : k().flags)
      v.push_back("(void)" + f->name + ";");
    if (!v.empty())
      os << "  " << join(v, " ") << "\n";
  }

  void emit_call_and_check(const std::string& like) {
    const Kernel& kk = k();
    std::vector<std::string> args = {"tg_c", "&tg_l"};
    for (const auto& t : kk.tensors)
      args.push_back(t->name);
    for (const auto& s : kk.scalars)
      args.push_back(s->name);
    for (const auto& f : kk.flags)
      args.push_back(f->name);
    std::string a = join(args, ", ");
    os << "  const tg_launch tg_l = tg_launch_for(" << like << ");\n";
    os << "  const tg_status tg_st = " << pre() << "_run(" << a << ", nullptr);\n";
    os << "  if (tg_st != TG_OK) {\n    tg_selection tg_q{};\n    " << pre() << "_run(" << a
       << ", &tg_q);\n    tg_fail_status(" << lit(qual()) << ", tg_st, tg_q);\n  }\n";
  }

  void emit_out(bool meta) {
    const Kernel& kk = k();
    auto w = written(kk);
    std::vector<std::string> params;
    for (const auto& t : kk.tensors)
      if (t->access == Access::Read)
        params.push_back("const at::Tensor& tg_in_" + t->name);
    for (auto& p : tail_params())
      params.push_back(p);
    for (const auto& t : w)
      params.push_back("at::Tensor& " + t->name);
    os << ret_type(true) << " " << pre() << "_out" << (meta ? "_meta" : "") << "("
       << join(params, ", ") << ") {\n";
    os << "  using tg_I = " << (meta ? "tg_sym" : "int64_t") << ";\n";
    std::vector<std::string> pargs;
    for (const auto& t : srcs())
      pargs.push_back(t->access == Access::Read ? "tg_in_" + t->name : t->name);
    for (const DimParam* d : explicit_dims())
      pargs.push_back(d->var->name);
    os << "  const auto tg_c = " << pre() << "_prepare<tg_I>(" << join(pargs, ", ") << ");\n";
    os << "  static const char* tg_dims = " << lit(dims_text()) << ";\n";
    if (meta)
      emit_unused_tail();
    const BufferPtr first = srcs()[0];
    const std::string like = first->access == Access::Read ? "tg_in_" + first->name : first->name;
    for (const auto& t : w) {
      os << "  " << out_dtype_table(t) << "\n";
      os << "  tg_check_out<tg_I>(" << lit(qual()) << ", " << lit(t->name) << ", " << t->name
         << ", " << lit(first->name) << ", " << like << ", tg_dt_" << t->name
         << "[tg_c.tg_binding], " << shape_vector(t, kk, qual()) << ", " << lit(shape_text(t))
         << ", tg_dims);\n";
    }
    if (!meta) {
      // Outputs must not overlap themselves, each other or an input (the C API assumes so).
      for (size_t i = 0; i < w.size(); ++i) {
        os << "  at::assert_no_internal_overlap(" << w[i]->name << ");\n";
        for (size_t j = i + 1; j < w.size(); ++j)
          os << "  at::assert_no_overlap(" << w[i]->name << ", " << w[j]->name << ");\n";
        for (const auto& r : kk.tensors)
          if (r->access == Access::Read)
            os << "  at::assert_no_overlap(" << w[i]->name << ", tg_in_" << r->name << ");\n";
      }
      for (const auto& t : kk.tensors)
        if (t->access == Access::Read)
          os << "  const at::Tensor " << t->name << " = tg_in_" << t->name << ".contiguous();\n";
      emit_call_and_check(like);
    }
    os << "  return " << ret_value(true) << ";\n}\n\n";
  }

  std::string schema(bool out) const {
    const Kernel& kk = k();
    std::vector<std::string> args;
    for (const auto& t : kk.tensors)
      if (t->access == Access::Read || (!out && t->access == Access::ReadWrite))
        args.push_back("Tensor " + t->name);
    for (const DimParam* d : explicit_dims())
      args.push_back("int " + d->var->name);
    for (const auto& s : kk.scalars)
      args.push_back(schema_scalar_type(s->type) + " " + s->name);
    for (const auto& f : kk.flags)
      args.push_back("bool " + f->name + "=False");
    auto w = written(kk);
    std::vector<std::string> rets;
    if (out) {
      args.push_back("*");
      for (size_t i = 0; i < w.size(); ++i) {
        args.push_back("Tensor(" + alias(i) + "!) " + w[i]->name);
        rets.push_back("Tensor(" + alias(i) + "!)");
      }
    } else {
      for (size_t i = 0; i < w.size(); ++i)
        rets.push_back("Tensor");
    }
    std::string r = rets.size() == 1 ? rets[0] : "(" + join(rets, ", ") + ")";
    return op.name + (out ? ".out" : "") + "(" + join(args, ", ") + ") -> " + r;
  }

  void emit() {
    const Kernel& kk = k();
    os << "// ---- " << lib << "." << op.name << ": " << c_line_comment(kk.summary) << "\n";
    os << "//   " << schema(false) << "\n";
    os << "//   type bindings: ";
    std::vector<std::string> b;
    for (const KernelEntry* e : op.bindings)
      b.push_back(public_function_name(lib, *e->kernel));
    os << join(b, ", ") << " (" << c_line_comment(op.bindings.front()->spec_path) << ")\n\n";
    emit_prepare();
    emit_run();
    if (has_functional(kk)) {
      emit_functional(false);
      emit_functional(true);
    }
    emit_out(false);
    emit_out(true);
  }
};

// The operators of a library: its kernel entries grouped by kernel name (consecutive: spec
// order, then type-binding order); a kernel whose bindings share their input dtypes is split.
std::vector<Op> library_ops(const Library& lib) {
  std::vector<Op> ops;
  for (const auto& e : lib.kernels) {
    if (!ops.empty() && ops.back().k().name == e.kernel->name)
      ops.back().bindings.push_back(&e);
    else
      ops.push_back({e.kernel->name, {&e}});
  }
  std::vector<Op> out;
  for (auto& op : ops) {
    std::set<std::vector<std::string>> rows;
    for (const KernelEntry* b : op.bindings) {
      std::vector<std::string> row;
      for (const auto& t : sources(*b->kernel))
        row.push_back(t->dtype.name());
      rows.insert(row);
    }
    if (rows.size() == op.bindings.size()) {
      out.push_back(op);
      continue;
    }
    for (const KernelEntry* b : op.bindings) {
      std::string fn = public_function_name(lib.name, *b->kernel);
      out.push_back({fn.substr(lib.name.size() + 1), {b}});
    }
  }
  return out;
}

} // namespace

bool check_torch(const Library& lib, DiagEngine& diag) {
  bool ok = true;
  auto refuse = [&](const ir::Kernel& k, DType t, const std::string& what, const SourceLoc& loc) {
    diag.error(loc.known() ? loc : k.loc,
               "--torch: " + what + " of kernel '" + k.name + "' has dtype " + t.name() +
                   ", which the PyTorch operators cannot take (torch has no " + t.name() +
                   (what.rfind("scalar", 0) == 0 ? " scalar: a Python int is an int64" : " tensors before 2.3") +
                   "); use u8 or a signed type for it, or generate without --torch (docs/torch.md)");
    ok = false;
  };
  std::set<const ir::Kernel*> seen;
  for (const auto& e : lib.kernels) {
    if (!seen.insert(e.kernel).second)
      continue;
    for (const auto& t : e.kernel->tensors)
      if (t->dtype.is_unsigned() && t->dtype != DType::u8())
        refuse(*e.kernel, t->dtype, "tensor '" + t->name + "'", t->loc);
    for (const auto& s : e.kernel->scalars)
      if (s->type == DType::u64())
        refuse(*e.kernel, s->type, "scalar '" + s->name + "'", s->loc);
  }
  return ok;
}

std::string emit_torch_binding(const Library& lib) {
  std::ostringstream os;
  auto ops = library_ops(lib);
  bool cuda = false;
  for (const Target* t : lib.targets)
    cuda = cuda || t->backend == Backend::CUDA;
  os << generated_marker(lib.name) << "\n";
  os << "// The PyTorch operators of tilegen library '" << lib.name << "' (docs/torch.md):\n";
  for (const auto& op : ops) {
    OpEmitter e{lib.name, op, os};
    os << "//   torch.ops." << lib.name << "." << e.schema(false) << "\n";
  }
  os << "// CPU" << (cuda ? " and CUDA (with TILEGEN_TORCH_CUDA)" : "")
     << " kernels call " << header_file_name(lib.name)
     << " on torch's current device and stream; Meta kernels give shapes and dtypes.\n"
        "// Built by add_tile_kernels(" << lib.name << " ... TORCH) against PyTorch's C++ headers.\n";
  os << "#include \"" << header_file_name(lib.name) << "\"\n"
     << "#include \"tilegen/dispatch.h\"\n\n"
     << "#include <ATen/MemoryOverlap.h>\n#include <ATen/Parallel.h>\n"
     << "#include <ATen/core/Tensor.h>\n#include <ATen/ops/empty.h>\n#include <c10/util/SmallVector.h>\n"
     << "#include <torch/library.h>\n#include <torch/version.h>\n\n"
     << "#include <algorithm>\n#include <limits>\n#include <sstream>\n#include <string>\n"
     << "#include <tuple>\n#include <vector>\n\n"
     << "#ifdef TILEGEN_TORCH_CUDA\n#include <c10/cuda/CUDAStream.h>\n#endif\n"
     << "#if TORCH_VERSION_MAJOR >= 2\n#define TG_TORCH_SYMINT 1\n#endif\n"
     << "#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)\n"
     << "#define TG_TORCH_FLOAT8 1\n#define TG_F8(t) t\n#else\n"
     << "#define TG_F8(t) at::ScalarType::Undefined\n#endif\n";
  os << kRuntime << "\nnamespace {\n\n";
  for (const auto& op : ops)
    OpEmitter{lib.name, op, os}.emit();
  os << "} // namespace\n\n";

  os << "TORCH_LIBRARY(" << lib.name << ", m) {\n";
  for (const auto& op : ops) {
    OpEmitter e{lib.name, op, os};
    if (has_functional(op.k()))
      os << "  m.def(" << lit(e.schema(false)) << ");\n";
    os << "  m.def(" << lit(e.schema(true)) << ");\n";
  }
  os << "}\n\n";
  auto impls = [&](const std::string& key, const std::string& suffix) {
    os << "TORCH_LIBRARY_IMPL(" << lib.name << ", " << key << ", m) {\n";
    for (const auto& op : ops) {
      if (has_functional(op.k()))
        os << "  m.impl(" << lit(op.name) << ", &tg_" << op.name << suffix << ");\n";
      os << "  m.impl(" << lit(op.name + ".out") << ", &tg_" << op.name << "_out" << suffix
         << ");\n";
    }
    os << "}\n";
  };
  impls("CPU", "");
  if (cuda) {
    os << "\n#ifdef TILEGEN_TORCH_CUDA\n";
    impls("CUDA", "");
    os << "#endif\n";
  }
  os << "\n";
  impls("Meta", "_meta");
  // PyTorch 1.x has no autograd fallback for meta tensors: pass them through (the operators
  // have no derivative either way, docs/torch.md).
  os << "\n#ifndef TG_TORCH_SYMINT\nTORCH_LIBRARY_IMPL(" << lib.name << ", AutogradMeta, m) {\n";
  for (const auto& op : ops) {
    if (has_functional(op.k()))
      os << "  m.impl(" << lit(op.name) << ", torch::CppFunction::makeFallthrough());\n";
    os << "  m.impl(" << lit(op.name + ".out") << ", torch::CppFunction::makeFallthrough());\n";
  }
  os << "}\n#endif\n";
  return os.str();
}

} // namespace tilegen::dispatch
