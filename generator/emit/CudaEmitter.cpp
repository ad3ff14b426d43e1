// CudaEmitter: file structure, expressions, the memory plan, barriers and control flow.
// The ops that move and compute tiles are in CudaOps.cpp.
#include "emit/CudaEmitter.h"

#include "ir/IRPrinter.h"
#include "support/InternalError.h"
#include "support/TextEscape.h"

#include <cctype>
#include <functional>
#include <sstream>

namespace tilegen::emit {

using namespace ir;

namespace {


int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

int64_t elems(const Buffer& b) {
  int64_t n = 1;
  for (const auto& e : b.shape)
    n *= cuda_const(e);
  return n;
}


} // namespace

void walk(const Stmt& s, const std::function<void(const Stmt&, const For*)>& f,
          const For* loop) {
  if (!s)
    return;
  f(s, loop);
  if (auto* q = s->as<Seq>())
    for (const auto& c : q->stmts)
      walk(c, f, loop);
  else if (auto* fo = s->as<For>())
    walk(fo->body, f, fo);
  else if (auto* i = s->as<IfThenElse>()) {
    walk(i->then_case, f, loop);
    walk(i->else_case, f, loop);
  }
}

int64_t cuda_const(const Expr& e) {
  auto* i = e->as<IntImm>();
  TG_ASSERT(i, "CUDA emitter: expected a constant, got " + to_string(e));
  return i->value;
}

CudaEmitter::CudaEmitter(const Kernel& k, const Target& t, const VariantInfo& info,
                         passes::LayoutPlan plan)
    : k_(k), ranges_(passes::body_ranges(k)), t_(t), info_(info), plan_(std::move(plan)) {
  threads_ = cuda_const(k.threads);
}

// ---- dialect tables ----------------------------------------------------------------------------

std::string CudaEmitter::type_name(DType t) const {
  if (t.is_narrow_float())
    return "float"; // values are computed in f32 and rounded where the IR says so
  return CFamilyPrinter::type_name(t);
}

std::string CudaEmitter::storage_type_name(DType t) const {
  if (t == DType::bf16())
    return "__nv_bfloat16";
  if (t == DType::f16())
    return "__half";
  if (t == DType::e4m3())
    return "__nv_fp8_e4m3";
  if (t == DType::e5m2())
    return "__nv_fp8_e5m2";
  return CFamilyPrinter::type_name(t);
}

std::string CudaEmitter::inf_literal(DType t) const {
  return t == DType::f64() ? "CUDART_INF" : "CUDART_INF_F";
}
std::string CudaEmitter::nan_literal(DType t) const {
  return t == DType::f64() ? "CUDART_NAN" : "CUDART_NAN_F";
}

std::string CudaEmitter::math_name(Intrinsic fn, DType t) const {
  const bool d = t == DType::f64();
  switch (fn) {
  case Intrinsic::Abs: return t.is_int() ? "" : (d ? "fabs" : "fabsf");
  case Intrinsic::Exp: return d ? "exp" : "expf";
  case Intrinsic::Exp2: return d ? "exp2" : "exp2f";
  case Intrinsic::Log: return d ? "log" : "logf";
  case Intrinsic::Log2: return d ? "log2" : "log2f";
  case Intrinsic::Sqrt: return d ? "sqrt" : "sqrtf";
  case Intrinsic::Rsqrt: return d ? "rsqrt" : "rsqrtf";
  case Intrinsic::Tanh: return d ? "tanh" : "tanhf";
  case Intrinsic::Erf: return d ? "erf" : "erff";
  case Intrinsic::Floor: return d ? "floor" : "floorf";
  case Intrinsic::Ceil: return d ? "ceil" : "ceilf";
  case Intrinsic::BitCast: return ""; // print_bitcast
  }
  return "";
}

// CUDA's (and HIP's) bit reinterpretation intrinsics.
std::string CudaEmitter::print_bitcast(const Call* c, int& prec) {
  const char* fn = "";
  switch (c->type.kind) {
  case ScalarKind::F32: fn = "__int_as_float"; break;
  case ScalarKind::I32: fn = "__float_as_int"; break;
  case ScalarKind::F64: fn = "__longlong_as_double"; break;
  case ScalarKind::I64: fn = "(int64_t)__double_as_longlong", prec = kUnary; break;
  default: internal_error("CUDA emitter: bitcast to " + std::string(c->type.name()));
  }
  return std::string(fn) + "(" + expr(c->args[0]) + ")";
}

std::string CudaEmitter::print_call(const Call* c, int& prec) {
  // e^x as 2^(x log2 e): exp2f is one ex2 instruction plus denormal handling (2 ulp), expf's
  // range reduction costs several times more; the extra rounding of x log2 e adds about
  // |x| 2^-24 relative error (docs/cuda-backend.md "Math").
  if (c->fn == Intrinsic::Exp && c->type == DType::f32())
    return need("tg_ex2") + "(" + expr(c->args[0], kMul) + " * 1.4426950408889634f)";
  if (c->fn == Intrinsic::Exp2 && c->type == DType::f32())
    return need("tg_ex2") + "(" + expr(c->args[0]) + ")";
  if (c->fn == Intrinsic::Rsqrt)
    return math_name(c->fn, c->type) + "(" + expr(c->args[0]) + ")";
  return CFamilyPrinter::print_call(c, prec);
}

// Significant bits of a float type: every integer of magnitude up to 2^bits is exact in it.
static int exact_integer_bits(DType t) {
  if (t == DType::bf16()) return 8;
  if (t == DType::f16()) return 11;
  if (t == DType::e4m3()) return 4;
  if (t == DType::e5m2()) return 3;
  if (t == DType::f32()) return 24;
  return 0;
}

std::string CudaEmitter::print_cast(const Cast* c, int& prec) {
  const DType to = c->type, from = c->value->type;
  // In vectorized loops (CudaVector.cpp): an integer in [0, 2^23) that the float type holds
  // exactly converts without rounding (a u4 code to bf16 is exact), and through the float
  // whose bits are 2^23 + x, less 2^23: a LOP3 and an FADD at full rate instead of an I2F
  // (a quarter of the rate on sm_80 and sm_90, MIO-issued).
  if (narrow_indices_ && from.is_int() && (to == DType::f32() || to.is_narrow_float())) {
    const passes::Interval r = passes::bounds_of(c->value, ranges_);
    const int bits = exact_integer_bits(to);
    if (r.bounded() && *r.lo >= 0 && bits > 0 && *r.hi <= (int64_t(1) << bits) &&
        *r.hi < (int64_t(1) << 23))
      return "(__uint_as_float(0x4B000000u | (uint32_t)" + expr(c->value, kUnary) +
             ") - 8388608.0f)";
  }
  if (to.is_narrow_float() && to != from) {
    std::string v = from == DType::f32() || from.is_narrow_float()
                        ? expr(c->value)
                        : "(float)" + expr(c->value, kUnary);
    return need(std::string("tg_round_") + to.name()) + "(" + v + ")";
  }
  return CFamilyPrinter::print_cast(c, prec);
}

std::string CudaEmitter::shfl_xor(const std::string& v, int mask) const {
  return "__shfl_xor_sync(0xffffffffu, " + v + ", " + std::to_string(mask) + ")";
}

int CudaEmitter::lane_bits() const {
  int b = 0;
  while ((1 << b) < t_.gpu.warp_size)
    ++b;
  return b;
}

std::string CudaEmitter::to_float(const std::string& v, DType t) const {
  if (t == DType::bf16())
    return "__bfloat162float(" + v + ")";
  if (t == DType::f16())
    return "__half2float(" + v + ")";
  if (t.is_fp8()) // cuda_fp8.h: one cvt on sm_89+, emulated before
    return "(float)(" + v + ")";
  return v;
}

std::string CudaEmitter::from_float(const std::string& v, DType t) const {
  if (t == DType::bf16())
    return "__float2bfloat16_rn(" + v + ")";
  if (t == DType::f16())
    return "__float2half_rn(" + v + ")";
  if (t.is_fp8()) // round to nearest even, satfinite (the cuda_fp8.h constructor)
    return std::string(t == DType::e4m3() ? "__nv_fp8_e4m3" : "__nv_fp8_e5m2") + "(" + v + ")";
  return v;
}

// ---- addressing --------------------------------------------------------------------------------

const layout::FragmentLayout& CudaEmitter::frag(const Buffer* b) const {
  auto it = plan_.fragments.find(b);
  TG_ASSERT(it != plan_.fragments.end(), "CUDA emitter: fragment '" + b->name + "' has no layout");
  return it->second;
}

const layout::FragmentLayout& CudaEmitter::loop_layout(const Parallel* p) const {
  auto it = plan_.loops.find(p);
  TG_ASSERT(it != plan_.loops.end(), "CUDA emitter: parallel loop at line " +
                                         std::to_string(p->loc.line) + " has no layout");
  return it->second;
}

std::string CudaEmitter::thread_coord(const layout::FragmentLayout& l, size_t d) const {
  std::string s;
  int64_t prod = 1;
  for (const auto& m : l.thread_modes) {
    if (m.stride[d] != 0 && m.size > 1) {
      std::string digit = "tg_tid";
      if (prod > 1)
        digit = "(" + digit + " / " + std::to_string(prod) + ")";
      if (prod * m.size < threads_)
        digit = "(" + digit + " % " + std::to_string(m.size) + ")";
      s += (s.empty() ? "" : " + ") + digit +
           (m.stride[d] == 1 ? "" : " * " + std::to_string(m.stride[d]));
    }
    prod *= m.size;
  }
  return s.empty() ? "0" : s;
}

std::string CudaEmitter::reg_coord(const layout::FragmentLayout& l, size_t d,
                                   const std::string& r) const {
  std::string s;
  int64_t prod = 1;
  for (const auto& m : l.regs[d]) {
    if (m.size > 1) {
      std::string digit = r;
      if (prod > 1)
        digit = "(" + digit + " / " + std::to_string(prod) + ")";
      if (prod * m.size < l.regs_of_dim(d))
        digit = "(" + digit + " % " + std::to_string(m.size) + ")";
      s += (s.empty() ? "" : " + ") + digit +
           (m.stride == 1 ? "" : " * " + std::to_string(m.stride));
    }
    prod *= m.size;
  }
  return s.empty() ? "0" : s;
}

std::string CudaEmitter::replica_leader(const layout::FragmentLayout& l) const {
  std::string s;
  int64_t prod = 1;
  for (const auto& m : l.thread_modes) {
    bool moves = false;
    for (int64_t st : m.stride)
      moves = moves || st != 0;
    if (!moves && m.size > 1) {
      std::string digit = prod > 1 ? "(tg_tid / " + std::to_string(prod) + ")" : "tg_tid";
      s += (s.empty() ? "" : " && ") + digit + " % " + std::to_string(m.size) + " == 0";
    }
    prod *= m.size;
  }
  return s;
}

std::string CudaEmitter::fragment_reg(const Buffer* b, const std::vector<Expr>& idx) {
  const auto& l = frag(b);
  std::string r;
  for (size_t d = 0; d < idx.size(); ++d) {
    auto* v = idx[d]->as<VarRef>();
    TG_ASSERT(v && var_regs_.count(v->var.get()),
              "CUDA emitter: fragment '" + b->name + "' indexed outside its parallel loop");
    const VarRegs& vr = var_regs_.at(v->var.get());
    TG_ASSERT(vr.count == l.regs_of_dim(d), "CUDA emitter: register count mismatch on " + b->name);
    if (r.empty() || r == "0")
      r = vr.count == 1 ? "0" : vr.counter;
    else
      r = "(" + r + ") * " + std::to_string(vr.count) + (vr.count == 1 ? "" : " + " + vr.counter);
  }
  r = r.empty() ? "0" : r;
  auto peer = peer_ptr_.find(b);
  if (peer != peer_ptr_.end()) // the other part's register r of this thread, from L2
    return "__ldcg(" + peer->second + " + (" + r + ") * " + std::to_string(threads_) + " + tg_tid)";
  return name(b->name) + "[" + r + "]";
}

std::string CudaEmitter::shared_ptr(const Buffer* b) {
  const SharedSlot& s = slots_.at(b);
  const std::string T = "(" + storage_type_name(b->dtype) + "*)";
  std::string p = "(" + T + "(" + smem_at(s.offset, !staged_.count(b)) + "))";
  auto it = stage_expr_.find(b);
  if (s.stages > 1 && it != stage_expr_.end())
    p = "(" + p + " + (" + it->second + ") * " + std::to_string(s.stage_elems) + ")";
  // tg_kernel<2> computes on the shifted tile (plan_shift_copies), not in the ring
  if (auto t = shift_tiles_.find(b); t != shift_tiles_.end())
    p = "(TG_VEC == 2 ? " + T + "(tg_smem + " + std::to_string(t->second) + ") : " + p + ")";
  return p;
}

std::string CudaEmitter::shared_offset(const Buffer* b, const std::string& row,
                                       const std::string& col) {
  const SharedSlot& s = slots_.at(b);
  if (!row_major(b)) {
    // Column panels (plan_hopper): panel col / P holds rows x P elements, swizzled inside.
    const int64_t pw = plan_.panels.at(b);
    const std::string P = std::to_string(pw);
    std::string in = "(" + row + ") * " + P + " + (" + col + ") % " + P;
    const auto& sw = plan_.swizzles.at(b);
    return "(" + col + ") / " + P + " * " + std::to_string(s.rows * pw) + " + " +
           need("tg_swizzle") + "<" + std::to_string(sw.B) + ", " + std::to_string(sw.M) + ", " +
           std::to_string(sw.S) + ">(" + in + ")";
  }
  std::string lin = "(" + row + ") * " + std::to_string(s.cols) + " + (" + col + ")";
  auto it = plan_.swizzles.find(b);
  if (it == plan_.swizzles.end() || it->second.B == 0)
    return lin;
  const auto& sw = it->second;
  return need("tg_swizzle") + "<" + std::to_string(sw.B) + ", " + std::to_string(sw.M) + ", " +
         std::to_string(sw.S) + ">(" + lin + ")";
}

bool CudaEmitter::row_major(const Buffer* b) const {
  auto pan = plan_.panels.find(b);
  return pan == plan_.panels.end() || pan->second >= slots_.at(b).cols;
}

bool CudaEmitter::splits_offsets(const Buffer* b) const {
  const int64_t cols = slots_.at(b).cols;
  auto it = plan_.swizzles.find(b);
  return row_major(b) && it != plan_.swizzles.end() && it->second.B > 0 && cols > 0 &&
         (cols & (cols - 1)) == 0;
}

std::string CudaEmitter::shared_offset_split(const Buffer* b, const std::string& base,
                                             const std::string& c_row, const std::string& c_col) {
  TG_ASSERT(splits_offsets(b), "shared_offset_split on '" + b->name + "'");
  const auto& sw = plan_.swizzles.at(b);
  const std::string f = need("tg_swizzle") + "<" + std::to_string(sw.B) + ", " +
                        std::to_string(sw.M) + ", " + std::to_string(sw.S) + ">((" + c_row +
                        ") * " + std::to_string(slots_.at(b).cols) + " + (" + c_col + "))";
  const std::string lo = std::to_string(((1 << sw.B) - 1) << sw.M);
  return "((" + base + " ^ (" + f + " & " + lo + ")) + (" + f + " & ~" + lo + "))";
}

std::string CudaEmitter::global_index(const Buffer& b, const std::vector<std::string>& idx) {
  std::string s;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (d == 0)
      s = "(int64_t)(" + idx[0] + ")";
    else
      s = "(" + s + ") * " + expr(b.shape[d], kMul) + " + (" + idx[d] + ")";
  }
  return s.empty() ? "0" : s;
}

std::string CudaEmitter::global_in_bounds(const Buffer& b, const std::vector<std::string>& idx,
                                          const std::vector<std::string>& checks) {
  std::string s;
  for (size_t d = 0; d < idx.size(); ++d)
    s += (d ? " && " : "") + (d < checks.size() && !checks[d].empty()
                                  ? checks[d]
                                  : need("tg_inb") + "(" + idx[d] + ", " + expr(b.shape[d]) + ")");
  return s.empty() ? "true" : s;
}

std::string CudaEmitter::print_load(const Load* l, int& prec) {
  const Buffer& b = *l->buffer;
  switch (b.scope) {
  case MemScope::Fragment: {
    std::string r = fragment_reg(&b, l->indices);
    return b.dtype.is_narrow_float() ? to_float(r, b.dtype) : r;
  }
  case MemScope::Local: {
    std::vector<std::string> idx;
    for (const auto& i : l->indices)
      idx.push_back(expr(i));
    std::string lin = idx.empty() ? "0" : idx[0];
    for (size_t d = 1; d < idx.size(); ++d)
      lin = "(" + lin + ") * " + std::to_string(cuda_const(b.shape[d])) + " + " + idx[d];
    return to_float(name(b.name) + "[" + lin + "]", b.dtype);
  }
  case MemScope::Shared: {
    if (auto v = vector_loads_.find(l); v != vector_loads_.end())
      return v->second;
    std::string row = l->indices.size() >= 2 ? shared_index(l->indices[l->indices.size() - 2]) : "0";
    std::string col = shared_index(l->indices.back());
    return to_float(shared_ptr(&b) + "[" + shared_offset(&b, row, col) + "]", b.dtype);
  }
  case MemScope::Global: {
    if (auto h = hoisted_loads_.find(l); h != hoisted_loads_.end())
      return h->second;
    std::vector<std::string> idx, checks; // split indices and thresholds: declare_load_indices
    for (size_t d = 0; d < l->indices.size(); ++d) {
      auto it = load_indices_.find({l, d});
      idx.push_back(it != load_indices_.end() ? it->second.index : expr(l->indices[d]));
      checks.push_back(it != load_indices_.end() ? it->second.in_bounds : "");
    }
    prec = kCond;
    std::string zero = b.dtype.is_float() ? "0.0f" : "0";
    return "(" + global_in_bounds(b, idx, checks) + " ? " +
           to_float(name(b.name) + "[" + global_index(b, idx) + "]", b.dtype) + " : " + zero + ")";
  }
  }
  internal_error("CUDA emitter: load from an unknown scope");
}

// ---- memory plan (docs/cuda-backend.md "Shared memory") -------------------------------------

void CudaEmitter::plan_memory() {
  // Stage factor: a shared buffer filled by a global copy inside a pipelined loop holds
  // `stages` copies where the target copies asynchronously, or stages them through registers
  // (HIP: HipPipeline.cpp).
  std::map<const Buffer*, int64_t> factor;
  walk(k_.body, [&](const Stmt& s, const For* loop) {
    auto* c = s->as<Copy>();
    if (!c || !loop || !loop->pipelined() || c->src.buffer->scope != MemScope::Global ||
        c->dst.buffer->scope != MemScope::Shared ||
        (t_.gpu.async_copy == AsyncCopy::None && !t_.hip.register_staged_pipeline))
      return;
    int64_t st = cuda_const(loop->stages);
    // a loop whose producers cannot be issued ahead runs in order, one stage (emit_pipelined)
    if (st >= 2 && split_pipeline_body(loop).hoistable)
      factor[c->dst.buffer.get()] = std::max(factor[c->dst.buffer.get()], st);
  });
  // TMA boxes and wgmma descriptors address 1024-byte swizzle atoms: panel buffers start on
  // 1024-byte boundaries (and each panel is rows x 128 bytes, rows a multiple of 8).
  auto align_of = [&](const Buffer& b) { return plan_.panels.count(&b) ? 1024 : 128; };
  for (const auto& [loop, tp] : plan_.tma_loops)
    for (const StmtNode* p : tp.producers)
      factor[p->as<Copy>()->dst.buffer.get()] = tp.stages;
  // Warp-specialized kernels: the TMA-filled buffers first; with consumer groups (ping-pong)
  // everything after them is each group's private region, repeated per group.
  const int64_t G = plan_.tma_loops.empty() ? 1 : plan_.tma_loops.begin()->second.groups;
  staged_.clear();
  for (const auto& [loop, tp] : plan_.tma_loops)
    for (const StmtNode* p : tp.producers)
      staged_.insert(p->as<Copy>()->dst.buffer.get());
  int64_t off = 0, max_reduce = 0, stage_scratch = 0;
  for (int pass = G > 1 ? 0 : 1; pass < 2; ++pass)
  walk(k_.body, [&](const Stmt& s, const For*) {
    if (pass == 0 && !s->as<Alloc>())
      return;
    if (auto* a = s->as<Alloc>()) {
      const Buffer& b = *a->buffer;
      if (b.scope != MemScope::Shared || (G > 1 && (pass == 0) != (staged_.count(&b) > 0)))
        return;
      SharedSlot slot;
      slot.stage_elems = elems(b);
      slot.stages = factor.count(&b) ? factor[&b] : 1;
      slot.cols = cuda_const(b.shape.back());
      slot.rows = slot.stage_elems / slot.cols;
      off = round_up(off, align_of(b));
      slot.offset = off;
      off += round_up(slot.stage_elems * b.dtype.bytes() * slot.stages, align_of(b));
      slots_[&b] = slot;
    } else if (auto* r = s->as<Reduce>()) {
      max_reduce = std::max(max_reduce, elems(*r->dst));
    } else if (auto* g = s->as<Gemm>()) {
      auto it = plan_.gemms.find(s.get());
      if (it != plan_.gemms.end() && it->second.a_staged)
        stage_scratch = std::max(stage_scratch, elems(*g->a) * 4);
    }
  });
  reduce_scratch_offset_ = off;
  off += round_up((threads_ / t_.gpu.warp_size) * 4 * max_reduce, 128);
  stage_scratch_offset_ = off;
  off += round_up(stage_scratch, 128);
  if (G > 1) {
    int64_t start = 0;
    for (const auto& [b, slot] : slots_)
      if (staged_.count(b))
        start = std::max(start, slot.offset + round_up(slot.stage_elems * b->dtype.bytes() * slot.stages, 1024));
    group_bytes_ = round_up(off - start, 1024);
    off = start + G * group_bytes_;
  }
  // mbarriers of a TMA pipeline: full[stages], then empty[stages].
  barrier_offset_ = off;
  // (+ the groups' order barriers, + full2[stages], empty2[stages] for a rotated body, + the
  // prologue's full and empty)
  // (+ the tile ring of a dynamic schedule: 5 mbarriers and 2 tile slots)
  // (+ a split tail's arrival words, one per group)
  for (const auto& [loop, tp] : plan_.tma_loops)
    off += round_up(8 * barrier_count(tp) + (passes::ws_dynamic_tiles(k_, plan_) ? 56 : 0) +
                        (passes::ws_split_join(k_, plan_) ? 8 * tp.groups : 0),
                    128);
  smem_bytes_ = off;
  plan_shift_copies();
}

// Staging rows of the shifted chunk copies (tg_kernel<2>), behind everything else: the other
// kernels of the file launch with smem_bytes_ and never touch them.
void CudaEmitter::plan_shift_copies() {
  shift_slots_.clear();
  shift_smem_bytes_ = 0;
  if (!shift_ok_ || !plan_.tma_loops.empty())
    return;
  int64_t off = round_up(smem_bytes_, 128);
  walk(k_.body, [&](const Stmt& s, const For* loop) {
    auto* c = s->as<Copy>();
    if (!c || !loop || !loop->pipelined() || !shift_copy_ok(c))
      return;
    const SharedSlot& sl = slots_.at(c->dst.buffer.get());
    const int64_t eb = c->src.buffer->dtype.bytes();
    ShiftSlot t;
    t.tile = off;
    off += round_up(sl.stage_elems * eb, 128);
    t.over = off;
    off += round_up(sl.stages * sl.rows * 16, 128);
    shift_slots_[c] = t;
  });
  if (shift_slots_.empty() || off > t_.gpu.smem_per_block) {
    shift_slots_.clear();
    return;
  }
  shift_smem_bytes_ = off;
}

// ---- barriers ----------------------------------------------------------------------------------

void CudaEmitter::barrier() {
  if (async_pending_) {
    line(need("tg_cp_async_wait") + "<0>();");
    async_pending_ = false;
  }
  line(sync_threads());
  smem_dirty_ = smem_read_ = false;
}

std::string CudaEmitter::smem_at(int64_t offset, bool group_private) const {
  std::string at = "tg_smem + " + std::to_string(offset);
  if (group_private && groups() > 1)
    at += " + tg_grp * " + std::to_string(group_bytes_);
  return at;
}

std::string CudaEmitter::sync_threads() const {
  if (!ws())
    return "__syncthreads();";
  return const_cast<CudaEmitter*>(this)->need("tg_bar_consumers") + "(tg_grp);";
}

void CudaEmitter::before_shared_read() {
  if (smem_dirty_ || async_pending_)
    barrier();
  smem_read_ = true;
}

void CudaEmitter::before_shared_write() {
  if (smem_read_)
    barrier();
  smem_dirty_ = true;
}

void CudaEmitter::before_shared_access(bool reads, bool writes) {
  if ((reads && (smem_dirty_ || async_pending_)) || (writes && smem_read_))
    barrier();
  smem_read_ = smem_read_ || reads;
  smem_dirty_ = smem_dirty_ || writes;
}

// ---- statements --------------------------------------------------------------------------------

void CudaEmitter::op_comment(const Stmt& s) {
  std::string what = stmt_kind_name(s->kind);
  for (auto& ch : what)
    ch = static_cast<char>(std::tolower(ch));
  if (s->loc.line > 0)
    line("// " + c_line_comment(info_.spec_path) + ":" + std::to_string(s->loc.line) + ": " + what);
}

void CudaEmitter::stmt(const Stmt& s) {
  if (!s)
    return;
  switch (s->kind) {
  case StmtKind::Seq:
    for (const auto& c : s->as<Seq>()->stmts)
      stmt(c);
    return;
  case StmtKind::Alloc: {
    const Buffer& b = *s->as<Alloc>()->buffer;
    if (b.scope == MemScope::Shared) {
      const SharedSlot& sl = slots_.at(&b);
      auto sw = plan_.swizzles.count(&b) ? plan_.swizzles.at(&b).str() : "none";
      line("// shared " + b.name + ": [" + std::to_string(sl.rows) + ", " + std::to_string(sl.cols) +
           "] " + b.dtype.name() + " x " + std::to_string(sl.stages) + " stage(s) at byte " +
           std::to_string(sl.offset) + ", swizzle " + sw);
    } else if (b.scope == MemScope::Fragment) {
      const auto& l = frag(&b);
      line("// fragment " + b.name + ": " + l.origin);
      line("//   " + l.str());
      line(storage_type_name(b.dtype) + " " + name(b.name) + "[" + std::to_string(l.num_regs()) +
           "];");
    } else {
      line(storage_type_name(b.dtype) + " " + name(b.name) + "[" + std::to_string(elems(b)) + "];");
    }
    return;
  }
  case StmtKind::Fill: {
    op_comment(s);
    const Fill* f = s->as<Fill>();
    if (f == folded_fill_) { // emitted after the loop, for no iterations (emit_ws_consumer_loop)
      line("// zeroed by the first wgmma of the loop below (plan_accumulator_clear)");
      return;
    }
    emit_fill(f);
    // The split kernel (one tile, no loop around it): without a fence between the zeroing and
    // the first wgmma, ptxas serialized every wgmma of the kernel (C7515, bf16 GEMM); the
    // persistent kernel's tile loop keeps them apart already, and its code stays as it was.
    if (split_kernel_ && wgmma_accumulator(f->dst.get()))
      fence_registers(name(f->dst->name), frag(f->dst.get()).num_regs());
    return;
  }
  case StmtKind::Copy:
    op_comment(s);
    if (prologue_copy(s->as<Copy>())) {
      line(need("tg_mbar_wait") + "(&tg_pro[0], (unsigned)(tg_i & 1)); // the producer's TMA box");
      return;
    }
    emit_copy(s->as<Copy>());
    return;
  case StmtKind::Gemm: op_comment(s); emit_gemm(s, s->as<Gemm>()); return;
  case StmtKind::Reduce: op_comment(s); emit_reduce(s->as<Reduce>()); return;
  case StmtKind::Parallel: op_comment(s); emit_parallel(s->as<Parallel>()); return;
  case StmtKind::AtomicAdd: op_comment(s); emit_atomic_add(s->as<AtomicAdd>()); return;
  case StmtKind::Combine:
    if (split_kernel_ && s->as<Combine>() == split_)
      emit_combine(split_);
    if (np_split_ && s->as<Combine>() == np_split_) {
      open("if (tg_p.tg_parts > 1)");
      line("// which split tile: the block's number over the parts of a tile (adjacent along x)");
      line("const int64_t tg_slot = (((int64_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) / tg_p.tg_parts;");
      line("__shared__ unsigned tg_split_arrival;");
      emit_combine(np_split_, /*persistent=*/false);
      close();
    }
    return; // elsewhere one block runs each tile's whole loop: nothing to join
  case StmtKind::LetStmt: {
    auto* l = s->as<LetStmt>();
    line("const " + type_name(l->var->type) + " " + name(l->var->name) + " = " + expr(l->value) +
         ";");
    return;
  }
  case StmtKind::For:
    op_comment(s);
    emit_for(s->as<For>());
    finish_deferred_sums(s->as<For>());
    return;
  case StmtKind::IfThenElse: {
    auto* i = s->as<IfThenElse>();
    // Uniform condition: every thread takes the same branch, so barriers inside are legal.
    // Both branches start from the barrier state before the `if`; after it, shared memory is
    // in either branch's state, so a pending write, read or async copy of either path stays
    // pending (no barrier at the end of a branch that left shared memory alone, e.g. the two
    // copies of a parallel loop versioned by passes/VersionByRange).
    const bool dirty0 = smem_dirty_, read0 = smem_read_, async0 = async_pending_;
    open("if (" + expr(i->cond) + ")");
    stmt(i->then_case);
    const bool dirty1 = smem_dirty_, read1 = smem_read_, async1 = async_pending_;
    smem_dirty_ = dirty0, smem_read_ = read0, async_pending_ = async0;
    if (i->else_case) {
      open_else();
      stmt(i->else_case);
    }
    close();
    smem_dirty_ = smem_dirty_ || dirty1;
    smem_read_ = smem_read_ || read1;
    async_pending_ = async_pending_ || async1;
    return;
  }
  case StmtKind::Store: internal_error("CUDA emitter: a store outside a parallel loop");
  }
}

void CudaEmitter::emit_for(const For* f) {
  // A loop whose body fills shared buffers from global memory is software-pipelined.
  bool producer = false;
  walk(f->body, [&](const Stmt& s, const For*) {
    if (auto* c = s->as<Copy>())
      producer = producer || (c->src.buffer->scope == MemScope::Global &&
                              c->dst.buffer->scope == MemScope::Shared);
  });
  if (f == ws_loop_) {
    emit_ws_consumer_loop(f, ws_pipe_);
    return;
  }
  if (producer) {
    emit_pipelined(f, f->pipelined() ? cuda_const(f->stages) : 1);
    return;
  }
  // Entering and leaving a loop: shared state must be settled at both ends of each trip.
  if (smem_dirty_ || async_pending_)
    barrier();
  std::string v = name(f->var->name);
  open("for (int64_t " + v + " = " + expr(f->start) + "; " + v + " < " + expr(f->start, kAdd) +
       " + " + expr(f->extent, kMul) + "; ++" + v + ")");
  bool read_before = smem_read_;
  stmt(f->body);
  if (smem_dirty_ || smem_read_ || async_pending_)
    barrier();
  smem_read_ = read_before;
  close();
}

std::string CudaEmitter::header_comment() const {
  std::ostringstream os;
  os << "// " << k_.name << " (" << k_.type_suffix() << ") for " << t_.name << ": "
     << c_line_comment(t_.summary) << "\n// Spec: " << c_line_comment(info_.spec_path) << ":"
     << k_.loc.line << ". " << c_line_comment(k_.summary) << "\n";
  for (const auto& n : k_.notes)
    os << "// " << c_line_comment(n) << "\n";
  for (const auto& n : plan_.notes)
    os << "// " << c_line_comment(n) << "\n";
  if (ws())
    os << "// Dynamic shared memory: " << smem_bytes_ << " bytes (+1024 for alignment); "
       << threads_ << " consumer threads x " << groups()
       << " group(s) + a 128-thread producer warpgroup per block (the fallback: " << threads_
       << ").\n";
  else
    os << "// Dynamic shared memory: " << smem_bytes_ << " bytes; " << threads_
       << " threads per block.\n";
  return os.str();
}

std::string emit_cuda_variant(const Kernel& k, const Target& target, const VariantInfo& info) {
  TG_ASSERT(target.backend == Backend::CUDA, "emit_cuda_variant: '" + target.name + "' is not CUDA");
  TG_ASSERT(!k.target.empty(), "emit_cuda_variant: kernel '" + k.name + "' is not instantiated");
  std::ostringstream err;
  DiagEngine diag(err);
  auto plan = passes::infer_layouts(k, target, diag);
  TG_ASSERT(plan.has_value(), "layout inference failed after instantiation accepted the kernel:\n" +
                                  err.str());
  return CudaEmitter(k, target, info, std::move(*plan)).run();
}

} // namespace tilegen::emit
