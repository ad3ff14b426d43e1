// The Metal backend: the memory plan, the kernel function and its arguments, layouts as
// expressions, and the MSL spelling of expressions. Op lowerings are in MslOps.cpp, helper
// functions in MslHelpers.cpp. See MslEmitter.h for the execution model, docs/metal.md for the
// output.
#include "emit/MslEmitter.h"

#include "ir/IRVisitor.h"
#include "support/InternalError.h"
#include "support/ReservedNames.h"
#include "support/TextEscape.h"

#include <algorithm>
#include <sstream>

namespace tilegen::emit {

using namespace ir;

namespace {

int64_t const_int(const Expr& e, const std::string& what) {
  auto* c = e->as<IntImm>();
  TG_ASSERT(c, "MSL emitter: " + what + " is not a constant after instantiation");
  return c->value;
}

int64_t align16(int64_t n) { return (n + 15) / 16 * 16; }

// Every Alloc of the body, in order.
class AllocScan : public IRVisitor {
public:
  std::vector<BufferPtr> bufs;

protected:
  void visit_Alloc(const Alloc* n) override { bufs.push_back(n->buffer); }
};

} // namespace

ReduceSplit reduce_split(const layout::FragmentLayout& l, size_t dim) {
  ReduceSplit out;
  int64_t span = 1;
  auto pow2 = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
  for (size_t k = 0; k < l.thread_modes.size(); ++k) {
    const auto& m = l.thread_modes[k];
    if (m.stride[dim] != 0 && m.size > 1) {
      if (pow2(span) && pow2(m.size) && span * m.size <= 32) {
        for (int64_t b = span; b < span * m.size; b *= 2)
          out.lane_bits.push_back(__builtin_ctzll(static_cast<unsigned long long>(b)));
      } else {
        out.scratch_modes.push_back(k);
        out.groups *= m.size;
      }
    }
    span *= m.size;
  }
  return out;
}

std::vector<MslParam> msl_params(const Kernel& k) {
  std::vector<MslParam> out;
  for (size_t i = 0; i < k.dims.size(); ++i)
    out.push_back({k.dims[i].var->name, "long", true, i});
  for (size_t i = 0; i < k.scalars.size(); ++i) {
    const DType t = k.scalars[i]->type;
    std::string ty = t.is_float() ? "float" : t == DType::i64() ? "long" : t.is_unsigned() ? "uint" : "int";
    out.push_back({k.scalars[i]->name, ty, false, i});
  }
  // 8-byte fields first, so that the struct has no padding inside and the host's copy (the
  // same fields as int64_t / float / int32_t) has the same layout on every ABI.
  std::stable_partition(out.begin(), out.end(), [](const MslParam& p) { return p.type == "long"; });
  return out;
}

MslEmitter::MslEmitter(const Kernel& k, const Target& target, const VariantInfo& info)
    : k_(k), t_(target), info_(info) {
  TG_ASSERT(!k.target.empty(), "MSL emitter: kernel '" + k.name + "' is not instantiated");
  threads_ = const_int(k.threads, "the thread count");
  layout_.threads = static_cast<int>(threads_);
  std::ostringstream err;
  DiagEngine diag(err);
  auto plan = passes::infer_layouts(k, target, diag);
  TG_ASSERT(plan.has_value(),
            "layout inference failed after instantiation accepted the kernel:\n" + err.str());
  plan_ = std::move(*plan);
  if (threads_ > t_.metal.max_threads_per_threadgroup) {
    layout_.problem = "kernel '" + k_.name + "' asks for " + std::to_string(threads_) +
                      " threads; a threadgroup of target '" + t_.name + "' has at most " +
                      std::to_string(t_.metal.max_threads_per_threadgroup) +
                      " (give the spec a `schedule.targets.metal` entry)";
    return;
  }
  plan_memory();
  planned_ = true;
}

// ---------------------------------------------------------------------------------------------
// Memory plan: every shared buffer at its own 16-aligned offset of tg_smem, in allocation
// order, then the scratch that reductions across SIMD-groups and gemms with an A fragment on
// the FMA path use (one region, reused: a barrier separates its uses).

void MslEmitter::plan_memory() {
  AllocScan scan;
  scan.visit(k_.body);
  allocs_ = scan.bufs;
  int64_t off = 0;
  std::string list;
  for (const auto& b : allocs_) {
    if (b->scope != MemScope::Shared)
      continue;
    int64_t n = b->dtype.bytes();
    for (const auto& e : b->shape)
      n *= const_int(e, "the shape of shared buffer '" + b->name + "'");
    smem_offset_[b.get()] = off;
    layout_.notes.push_back(b->name + " at " + std::to_string(off) + " (" + std::to_string(n) + " B)");
    list += " " + b->name + "=" + std::to_string(n);
    off = align16(off + n);
  }
  // Scratch: a reduction writes one f32 per destination element and SIMD-group along the
  // reduced dim; an FMA gemm with an A fragment stages A (f32).
  int64_t scratch = 0;
  class ScratchScan : public IRVisitor {
  public:
    const passes::LayoutPlan* plan = nullptr;
    int64_t bytes = 0;

  protected:
    void visit_Reduce(const Reduce* r) override {
      const auto& L = plan->fragments.at(r->src.get());
      const ReduceSplit split = reduce_split(L, static_cast<size_t>(r->dim));
      if (split.groups > 1) {
        int64_t elems = 1;
        for (size_t d = 0; d < L.shape.size(); ++d)
          if (d != static_cast<size_t>(r->dim))
            elems *= L.shape[d];
        bytes = std::max(bytes, elems * split.groups * 4);
      }
    }
    void visit_Gemm(const Gemm* g) override {
      auto it = plan->gemms.find(g);
      if (it != plan->gemms.end() && it->second.kind == passes::GemmPlan::Simt &&
          g->a->scope == MemScope::Fragment) {
        int64_t n = 4;
        for (const auto& s : g->a->shape)
          n *= s->as<IntImm>()->value;
        bytes = std::max(bytes, n);
      }
    }
  } ss;
  ss.plan = &plan_;
  ss.visit(k_.body);
  scratch = ss.bytes;
  scratch_offset_ = off;
  scratch_bytes_ = scratch;
  if (scratch > 0) {
    layout_.notes.push_back("scratch at " + std::to_string(off) + " (" + std::to_string(scratch) +
                            " B: reductions across SIMD-groups)");
    list += " scratch=" + std::to_string(scratch);
  }
  off = align16(off + scratch);
  layout_.threadgroup_bytes = off;
  if (off > t_.metal.threadgroup_memory_bytes && layout_.problem.empty())
    layout_.problem = "kernel '" + k_.name + "' needs " + std::to_string(off) +
                      " B of threadgroup memory (" + (list.empty() ? "" : list.substr(1)) +
                      "), more than the " + std::to_string(t_.metal.threadgroup_memory_bytes) +
                      " B of target '" + t_.name +
                      "' (give the spec smaller tiles in `schedule.targets.metal`)";
}

int64_t MslEmitter::shared_offset(const Buffer* b) const {
  auto it = smem_offset_.find(b);
  TG_ASSERT(it != smem_offset_.end(), "MSL emitter: shared buffer '" + b->name + "' has no offset");
  return it->second;
}

MslLayout msl_layout(const Kernel& k, const Target& target) {
  VariantInfo info;
  MslEmitter e(k, target, info);
  return e.layout();
}

// ---------------------------------------------------------------------------------------------
// Layouts as expressions of tg_tid (the layouts' thread index) and register counters.

const layout::FragmentLayout& MslEmitter::frag(const Buffer* b) const {
  auto it = plan_.fragments.find(b);
  TG_ASSERT(it != plan_.fragments.end(), "MSL emitter: fragment '" + b->name + "' has no layout");
  return it->second;
}

std::string MslEmitter::thread_expr(const layout::FragmentLayout& l, size_t d) const {
  std::string s;
  int64_t span = 1;
  for (const auto& m : l.thread_modes) {
    const int64_t stride = m.stride[d];
    if (stride != 0 && m.size > 1) {
      std::string digit = span == 1 ? "tg_tid" : "tg_tid / " + std::to_string(span) + "u";
      if (span * m.size < threads_)
        digit = "(" + digit + ") % " + std::to_string(m.size) + "u";
      std::string term = "int(" + digit + ")";
      if (stride != 1)
        term += " * " + std::to_string(stride);
      s += (s.empty() ? "" : " + ") + term;
    }
    span *= m.size;
  }
  return s.empty() ? "0" : s;
}

std::string MslEmitter::thread_coord(const layout::FragmentLayout& l, size_t d) {
  const std::string e = thread_expr(l, d);
  if (e == "0")
    return "0";
  auto it = coord_names_.find(e);
  if (it != coord_names_.end())
    return it->second;
  std::string n = "tg_tc" + std::to_string(coord_names_.size());
  coord_names_.emplace(e, n);
  coord_decls_.push_back({n, e});
  return n;
}

std::string MslEmitter::reg_coord(const layout::FragmentLayout& l, size_t d,
                                  const std::string& r) const {
  std::string s;
  int64_t span = 1;
  for (const auto& m : l.regs[d]) {
    if (m.size > 1) {
      std::string digit = span == 1 ? r : r + " / " + std::to_string(span);
      if (span * m.size < l.regs_of_dim(d))
        digit = "(" + digit + ") % " + std::to_string(m.size);
      std::string term = span == 1 && span * m.size >= l.regs_of_dim(d) ? digit : "(" + digit + ")";
      if (m.stride != 1)
        term += " * " + std::to_string(m.stride);
      s += (s.empty() ? "" : " + ") + term;
    }
    span *= m.size;
  }
  return s.empty() ? "0" : s;
}

std::string MslEmitter::replica_leader(const layout::FragmentLayout& l) const {
  std::string s;
  int64_t span = 1;
  for (const auto& m : l.thread_modes) {
    bool moves = false;
    for (int64_t st : m.stride)
      moves = moves || st != 0;
    if (!moves && m.size > 1) {
      std::string digit = span == 1 ? "tg_tid" : "tg_tid / " + std::to_string(span) + "u";
      if (span * m.size < threads_)
        digit = "(" + digit + ") % " + std::to_string(m.size) + "u";
      s += (s.empty() ? "" : " && ") + digit + " == 0u";
    }
    span *= m.size;
  }
  return s;
}

MslEmitter::RegLoops MslEmitter::open_reg_loops(const layout::FragmentLayout& l) {
  RegLoops out;
  for (size_t d = 0; d < l.rank(); ++d) {
    const std::string tc = thread_coord(l, d);
    const int64_t R = l.regs_of_dim(d);
    if (R <= 1) {
      out.counter.push_back("0");
      out.coord.push_back(tc);
      continue;
    }
    std::string r = fresh("tg_r");
    open("for (int " + r + " = 0; " + r + " < " + std::to_string(R) + "; ++" + r + ")");
    ++out.opened;
    out.counter.push_back(r);
    const std::string rc = reg_coord(l, d, r);
    out.coord.push_back(tc == "0" ? rc : rc == "0" ? tc : tc + " + " + rc);
  }
  return out;
}

void MslEmitter::close_loops(int n) {
  for (int i = 0; i < n; ++i)
    close();
}

std::string MslEmitter::reg_index(const Buffer* b, const std::vector<std::string>& r) const {
  const auto& L = frag(b);
  std::string s;
  for (size_t d = 0; d < L.rank(); ++d) {
    const int64_t R = L.regs_of_dim(d);
    if (d > 0 && !s.empty() && R > 1)
      s = "(" + s + ") * " + std::to_string(R);
    else if (d > 0 && !s.empty())
      continue;
    if (R > 1 && r[d] != "0")
      s = s.empty() ? r[d] : s + " + " + r[d];
  }
  return s.empty() ? "0" : s;
}

// ---------------------------------------------------------------------------------------------
// Module

std::string MslEmitter::header_comment() const {
  std::string s = "// Generated by tilegen: do not edit.\n";
  s += "//   spec:     " + c_line_comment(info_.spec_path) + "\n";
  s += "//   kernel:   " + k_.name +
       (k_.summary.empty() ? "" : " (" + c_line_comment(k_.summary) + ")") + "\n";
  std::string inst = k_.type_suffix();
  for (const auto& f : k_.flags)
    if (auto it = k_.bindings.find(f->name); it != k_.bindings.end())
      inst += " " + f->name + "=" + std::to_string(it->second);
  for (const auto& d : k_.dims)
    if (auto it = k_.bindings.find(d.var->name); it != k_.bindings.end())
      inst += " " + d.var->name + "=" + std::to_string(it->second);
  s += "//   instance: " + inst + "\n";
  s += "//   target:   " + t_.name + " (" + c_line_comment(t_.summary) + ")\n";
  for (const auto& n : k_.notes)
    s += "//   schedule: " + c_line_comment(n) + "\n";
  for (const auto& n : plan_.notes)
    s += "//   layout:   " + c_line_comment(n) + "\n";
  s += "// Threadgroup: " + std::to_string(threads_) + " threads (" +
       std::to_string(threads_ / 32) + " SIMD-groups of 32), " +
       std::to_string(layout_.threadgroup_bytes) + " B of threadgroup memory";
  for (const auto& n : layout_.notes)
    s += "; " + c_line_comment(n);
  s += ".\n// Arguments: buffer(i) = tensor i in spec order";
  s += ", buffer(" + std::to_string(k_.tensors.size()) + ") = tg_params (dims, scalars)";
  s += ", threadgroup(0) = tg_smem; one threadgroup per block, grid (";
  for (size_t i = 0; i < k_.grid.size(); ++i)
    s += (i ? ", " : "") + k_.grid[i].index->name;
  s += ").\n";
  return s;
}

void MslEmitter::emit_kernel() {
  // The kernel's arguments.
  std::vector<std::string> params;
  for (size_t i = 0; i < k_.tensors.size(); ++i) {
    const auto& t = k_.tensors[i];
    params.push_back(std::string("device ") + (t->access == Access::Read ? "const " : "") +
                     storage_type_name(t->dtype) + "* " + name(t->name) + " [[buffer(" +
                     std::to_string(i) + ")]]");
  }
  params.push_back("constant tg_params& tg_p [[buffer(" + std::to_string(k_.tensors.size()) + ")]]");
  params.push_back("threadgroup uchar* tg_smem [[threadgroup(0)]]");
  params.push_back("uint3 tg_block [[threadgroup_position_in_grid]]");
  params.push_back("uint tg_lane [[thread_index_in_simdgroup]]");
  params.push_back("uint tg_simd [[simdgroup_index_in_threadgroup]]");
  line("[[max_total_threads_per_threadgroup(" + std::to_string(threads_) + ")]]");
  std::string head = "kernel void " + info_.function_name + "(";
  std::string sig = head;
  for (size_t i = 0; i < params.size(); ++i)
    sig += (i ? ",\n" + std::string(head.size(), ' ') : "") + params[i];
  line(sig + ")");
  open("");
  // The body first (it declares the thread coordinates it needs), then the preamble.
  std::ostringstream saved;
  saved << out_.str();
  out_.str("");
  stmt(k_.body);
  flush();
  std::string body = out_.str();
  out_.str("");
  out_ << saved.str();
  line("// The layouts' thread index: SIMD-group s, lane l is thread 32 s + l.");
  line("const uint tg_tid = tg_simd * 32u + tg_lane;");
  for (const auto& tc : k_.tile_consts) {
    auto it = k_.bindings.find(tc.var->name);
    TG_ASSERT(it != k_.bindings.end(), "MSL emitter: tile constant '" + tc.var->name + "' is not bound");
    line("const int " + name(tc.var->name) + " = " + std::to_string(it->second) + ";");
  }
  for (const auto& p : msl_params(k_)) {
    if (p.is_dim && k_.dims[p.index].var->kind != VarKind::Dim)
      continue; // value params are constants in this variant
    line("const " + p.type + " " + name(p.name) + " = tg_p." + name(p.name) + ";");
  }
  static const char* axes[] = {"x", "y", "z"};
  for (size_t i = 0; i < k_.grid.size(); ++i)
    line("const long " + name(k_.grid[i].index->name) + " = long(tg_block." + axes[i] + ");");
  if (!coord_decls_.empty())
    line("// Thread coordinates of the layouts (layout notes above).");
  for (const auto& [n, e] : coord_decls_)
    line("const int " + n + " = " + e + ";");
  // Threadgroup arrays of the shared buffers.
  for (const auto& b : allocs_)
    if (b->scope == MemScope::Shared)
      line(shared_ptr_decl(b.get()));
  line("(void)tg_smem;");
  out_ << body;
  close();
}

std::string MslEmitter::shared_ptr_decl(const Buffer* b) {
  const std::string ty = storage_type_name(b->dtype);
  return "threadgroup " + ty + "* " + name(b->name) + " = (threadgroup " + ty + "*)(tg_smem + " +
         std::to_string(shared_offset(b)) + ");";
}

std::string MslEmitter::run() {
  TG_ASSERT(planned_, "MSL emitter: " + layout_.problem);
  out_.str("");
  emit_kernel();
  std::string kernel = out_.str();
  std::string s = header_comment();
  s += "#include <metal_stdlib>\nusing namespace metal;\n\n";
  std::string helpers = msl_helper_source(helpers_);
  if (!helpers.empty())
    s += helpers + "\n";
  s += "// Dims and scalars (8-byte fields first), as the host packs them.\nstruct tg_params {\n";
  for (const auto& p : msl_params(k_))
    s += "  " + p.type + " " + name(p.name) + ";\n";
  if (msl_params(k_).empty())
    s += "  int tg_unused;\n";
  s += "};\n\n";
  return s + kernel;
}

// ---------------------------------------------------------------------------------------------
// Addressing and values

std::string MslEmitter::linear(const Buffer& b, const std::vector<std::string>& idx) {
  TG_ASSERT(idx.size() == b.rank(), "MSL emitter: rank mismatch indexing '" + b.name + "'");
  if (idx.empty())
    return "0";
  // An index printed at the lowest precedence may hold an operator that binds looser than
  // `+` (`j >> 1` of a packed tensor's byte, `&`, `?:`, comparisons): it is parenthesized after
  // the `+` (an index without one prints as before).
  auto operand = [](const std::string& i) {
    return i.find_first_of("<>&|^?=!") == std::string::npos ? i : "(" + i + ")";
  };
  std::string s = idx[0];
  for (size_t d = 1; d < idx.size(); ++d)
    s = "(" + s + ") * " + expr(b.shape[d], kMul) + " + " + operand(idx[d]);
  return s;
}

std::string MslEmitter::in_bounds(const Buffer& b, const std::vector<std::string>& idx) {
  std::string s;
  for (size_t d = 0; d < idx.size(); ++d)
    s += (s.empty() ? "" : " && ") + need("tg_inb") + "(" + idx[d] + ", " + expr(b.shape[d]) + ")";
  return s.empty() ? "true" : s;
}

std::string MslEmitter::to_compute(const std::string& v, DType t) {
  if (t.is_16bit_float())
    return "float(" + v + ")";
  if (t == DType::e4m3())
    return need("tg_e4m3_to_f32") + "(" + v + ")";
  if (t == DType::e5m2())
    return need("tg_e5m2_to_f32") + "(" + v + ")";
  if (t == DType::i8())
    return "int(" + v + ")";
  if (t.is_narrow_unsigned())
    return "uint(" + v + ")";
  return v;
}

std::string MslEmitter::to_storage(const std::string& v, DType t) {
  if (t == DType::f16())
    return "half(" + v + ")";
  if (t == DType::bf16())
    return "bfloat(" + v + ")";
  if (t == DType::e4m3())
    return need("tg_f32_to_e4m3") + "(" + v + ")";
  if (t == DType::e5m2())
    return need("tg_f32_to_e5m2") + "(" + v + ")";
  if (t == DType::i8())
    return "char(" + v + ")";
  if (t == DType::u8())
    return "uchar(" + v + ")";
  if (t == DType::u16())
    return "ushort(" + v + ")";
  return v;
}

std::string MslEmitter::round_to(const std::string& v, DType t) {
  if (t.is_narrow_float() || t.is_narrow_unsigned())
    return to_compute(to_storage(v, t), t);
  return v;
}

std::vector<std::string> MslEmitter::region_index(const Region& r,
                                                  const std::vector<std::string>& tile) {
  std::vector<std::string> idx;
  const size_t lead = r.offsets.size() - tile.size();
  for (size_t d = 0; d < r.offsets.size(); ++d) {
    std::string o = expr(r.offsets[d]);
    if (d < lead) {
      idx.push_back(o);
      continue;
    }
    const std::string& t = tile[d - lead];
    idx.push_back(o == "0" ? t : t == "0" ? o : "(" + o + ") + " + t);
  }
  return idx;
}

// ---------------------------------------------------------------------------------------------
// Expressions

std::string MslEmitter::type_name(DType t) const {
  switch (t.kind) {
  case ScalarKind::Bool: return "bool";
  case ScalarKind::I8: return "int"; // computed as int, stored as char
  case ScalarKind::I32: return "int";
  case ScalarKind::I64: return "long";
  case ScalarKind::U8:
  case ScalarKind::U16: // computed as uint, stored as uchar / ushort
  case ScalarKind::U32: return "uint";
  case ScalarKind::U64: return "ulong";
  case ScalarKind::F16:
  case ScalarKind::BF16:
  case ScalarKind::E4M3:
  case ScalarKind::E5M2:
  case ScalarKind::F32: return "float";
  case ScalarKind::F64: break;
  }
  internal_error("MSL emitter: f64 survived check_metal");
}

std::string MslEmitter::storage_type_name(DType t) const {
  switch (t.kind) {
  case ScalarKind::F16: return "half";
  case ScalarKind::BF16: return "bfloat";
  case ScalarKind::E4M3:
  case ScalarKind::E5M2: return "uchar";
  case ScalarKind::I8: return "char";
  case ScalarKind::U8: return "uchar";
  case ScalarKind::U16: return "ushort";
  default: return type_name(t);
  }
}

std::string MslEmitter::inf_literal(DType) const { return "INFINITY"; }
std::string MslEmitter::nan_literal(DType) const { return "NAN"; }

std::string MslEmitter::math_name(Intrinsic fn, DType t) const {
  switch (fn) {
  case Intrinsic::Abs: return t.is_int() ? "abs" : "fabs";
  case Intrinsic::Exp: return "exp";
  case Intrinsic::Exp2: return "exp2";
  case Intrinsic::Log: return "log";
  case Intrinsic::Log2: return "log2";
  case Intrinsic::Sqrt: return "sqrt";
  case Intrinsic::Rsqrt: return "rsqrt";
  case Intrinsic::Tanh: return "tanh";
  case Intrinsic::Erf: return "tg_erf"; // MSL has no erf
  case Intrinsic::Floor: return "floor";
  case Intrinsic::Ceil: return "ceil";
  case Intrinsic::BitCast: return ""; // print_bitcast
  }
  return "";
}

const std::set<std::string>& MslEmitter::reserved_words() const {
  // C++14 keywords (MSL is C++14 based), MSL's own keywords, attribute and address-space
  // names, the scalar and vector type names of <metal_stdlib> that a spec name could shadow,
  // and the library functions generated code calls. support/ReservedNames lists the same words
  // (the front end refuses them; ReservedNamesTest checks that it refuses this whole list).
  static const std::set<std::string> words = [] {
    std::set<std::string> w = c11_keywords();
    w.insert(cxx_keywords().begin(), cxx_keywords().end());
    w.insert({"kernel", "vertex", "fragment", "device", "threadgroup", "threadgroup_imageblock",
              "constant", "thread", "ray_data", "object_data", "visible", "stitchable", "metal",
              "half", "bfloat", "uchar", "ushort", "uint", "ulong", "size_t", "ptrdiff_t",
              "float2", "float3", "float4", "half2", "half4", "int2", "int3", "int4", "uint2",
              "uint3", "uint4", "bool2", "bool4", "atomic_int", "atomic_uint", "atomic_float",
              "simdgroup_matrix", "simdgroup_float8x8", "simdgroup_half8x8",
              "simdgroup_bfloat8x8", "mem_flags", "memory_order", "memory_order_relaxed",
              "INFINITY", "NAN", "MAXFLOAT", "HUGE_VALF", "main",
              // functions generated code calls
              "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "floor", "ceil", "fabs",
              "abs", "min", "max", "fma", "select", "as_type", "isnan", "isinf",
              "threadgroup_barrier", "simd_shuffle_xor", "simd_sum", "simd_max", "simd_min",
              "simdgroup_multiply_accumulate", "simdgroup_load", "simdgroup_store",
              "atomic_fetch_add_explicit"});
    return w;
  }();
  return words;
}

std::string MslEmitter::print_var(const Var* v) {
  auto it = var_names_.find(v);
  return it != var_names_.end() ? it->second : name(v->name);
}

std::string MslEmitter::print_int(const IntImm* i, int& prec) {
  if (!i->name.empty())
    return name(i->name);
  const int64_t v = i->value;
  if (i->type.is_unsigned())
    return std::to_string(static_cast<uint64_t>(v)) + (i->type == DType::u64() ? "UL" : "u");
  if (v == INT64_MIN) {
    prec = kAdd;
    return "-9223372036854775807L - 1L";
  }
  std::string s = std::to_string(v);
  if (v > INT32_MAX || v < INT32_MIN)
    s += "L";
  if (v < 0)
    prec = kUnary;
  return s;
}

std::string MslEmitter::print_call(const Call* c, int& prec) {
  if (c->fn == Intrinsic::BitCast) {
    // as_type needs operands of equal size: an expression may have a wider C++ type than its
    // IR type (`x ^ -2147483648` is a long), so it is converted first.
    const Expr& a = c->args[0];
    const bool exact = a->as<Load>() || a->as<VarRef>() || a->as<Call>();
    return "as_type<" + type_name(c->type) + ">(" +
           (exact ? expr(a) : type_name(a->type) + "(" + expr(a) + ")") + ")";
  }
  if (c->fn == Intrinsic::Erf)
    return need("tg_erf") + "(" + expr(c->args[0]) + ")";
  if (c->fn == Intrinsic::Rsqrt)
    return "rsqrt(" + expr(c->args[0]) + ")";
  (void)prec;
  return math_name(c->fn, c->type) + "(" + expr(c->args[0]) + ")";
}

std::string MslEmitter::print_cast(const Cast* c, int& prec) {
  const DType to = c->type, from = c->value->type;
  if (to == from)
    return print(c->value, prec);
  prec = kPrimary;
  if (to.is_bool())
    return "(" + expr(c->value, kEq) + " != 0)";
  if (to.is_narrow_float()) {
    std::string v = from.is_float() ? expr(c->value) : "float(" + expr(c->value) + ")";
    return round_to(v, to);
  }
  if (to == DType::f32() && from.is_narrow_float())
    return print(c->value, prec); // already a float holding the exact value
  // u8/u16 -> u32: already a uint holding the value (to_compute). Not `uint(uint(x[i]))`, which
  // C++ (the simulator's g++) may take for a declaration of a parameter x of array type.
  if (to == DType::u32() && from.is_narrow_unsigned())
    return print(c->value, prec);
  if (to == DType::i8() && from.is_unsigned()) // wraps to 8 bits (bitcast<i8> of a u8), held as int
    return "int(char(" + expr(c->value) + "))";
  if (to.is_narrow_unsigned()) // wraps to 8/16 bits, held as uint
    return round_to(type_name(to) + "(" + expr(c->value) + ")", to);
  return type_name(to) + "(" + expr(c->value) + ")";
}

std::string MslEmitter::print_load(const Load* l, int& prec) {
  const Buffer& b = *l->buffer;
  std::vector<std::string> idx;
  for (const auto& i : l->indices)
    idx.push_back(expr(i));
  switch (b.scope) {
  case MemScope::Fragment: {
    std::vector<std::string> r;
    for (const auto& i : l->indices) {
      auto* v = i->as<VarRef>();
      TG_ASSERT(v && var_regs_.count(v->var.get()),
                "MSL emitter: fragment '" + b.name + "' read outside a parallel loop over it");
      r.push_back(var_regs_.at(v->var.get()));
    }
    return name(b.name) + "[" + reg_index(&b, r) + "]";
  }
  case MemScope::Local: return name(b.name) + "[" + linear(b, idx) + "]";
  case MemScope::Shared: return to_compute(name(b.name) + "[" + linear(b, idx) + "]", b.dtype);
  case MemScope::Global: {
    prec = kCond;
    const std::string v = to_compute(name(b.name) + "[" + linear(b, idx) + "]", b.dtype);
    int p = kPrimary;
    return in_bounds(b, idx) + " ? " + v + " : " + print(make_zero(l->type), p);
  }
  }
  internal_error("MSL emitter: unknown memory scope");
}

// ---------------------------------------------------------------------------------------------

std::string emit_metal_variant(const Kernel& k, const Target& target, const VariantInfo& info) {
  TG_ASSERT(target.backend == Backend::Metal, "emit_metal_variant: '" + target.name + "' is not Metal");
  return MslEmitter(k, target, info).run();
}

} // namespace tilegen::emit
