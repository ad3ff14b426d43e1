// HipEmitter: multi-stage global->LDS pipelines without asynchronous copies (docs/hip.md
// "Pipelines").
//
// AMD's CDNA/RDNA GPUs have no cp.async: a global load lands in VGPRs and an LDS store takes it
// from there. A pipelined loop with S >= 2 stages keeps S LDS buffers per tile it fills
// (CudaEmitter::plan_memory, HipFacts::register_staged_pipeline) and runs
//
//   prologue: tiles 0 .. S-2 copied into stages 0 .. S-2 (synchronously), one barrier;
//   iteration i: the 16-byte chunks of tile i+S-1 loaded into registers (global loads in
//                flight), the compute on stage i % S, the registers stored into stage
//                (i+S-1) % S -- the stage iteration i-1 read -- and one barrier.
//
// The barrier that ends iteration i-1 orders its reads of stage (i-1) % S before iteration i's
// stores into it, and the one ending iteration i orders those stores before iteration i+S-1
// reads them; so one barrier per iteration (the one-stage loop needs two). The loads of the
// next tile are issued before the matrix instructions of this one and waited for only at the
// stores after them: the register-staged prefetch of composable_kernel's and HipKittens' gemm
// pipelines. The compute is the same code on the same values whatever S is: results do not
// depend on the stage count.
//
// Only the 16-byte chunk paths stage through registers (TG_VEC >= 16: copies of the tensor's
// own type, and FP8 widened to f16 at the store); a copy that takes neither (the scalar kernel
// tg_kernel_0, a padded copy) copies its tile synchronously at the point of the store, into the
// same free stage. Each thread's staged registers are ResourceUse::staging_words.
#include "emit/HipEmitter.h"

#include "ir/Simplify.h"
#include "support/InternalError.h"

namespace tilegen::emit {

using namespace ir;

// How a producer copy stages through registers: the width of its 16-byte source chunks in
// elements, or 0 where it does not (then it is copied synchronously at the store).
HipEmitter::StagedCopy HipEmitter::staged_copy(const Copy* c) const {
  const Buffer& g = *c->src.buffer;
  const Buffer* sb = c->dst.buffer.get();
  const SharedSlot& sl = slots_.at(sb);
  const size_t n = g.rank();
  StagedCopy s;
  if (cp_async_vec_ok(c, true)) { // the tensor's own type: chunks stored as they are
    s.elems = 16 / g.dtype.bytes();
  } else if (g.dtype.is_fp8() && sb->dtype == DType::f16() && is_const_zero(c->pad) && sl.cols % 16 == 0 &&
             expr_multiple_of(c->src.offsets[n - 1], 16)) { // FP8 widened to f16 (LegalizeHip)
    s.elems = 16;
    s.widen = true;
  } else {
    return s;
  }
  s.chunks = sl.rows * sl.cols / s.elems;
  s.per = (s.chunks + threads_ - 1) / threads_;
  return s;
}

void HipEmitter::staged_chunk(const Copy* c, const StagedCopy& s) {
  const int64_t CPR = slots_.at(c->dst.buffer.get()).cols / s.elems;
  line("const int tg_q = tg_tid + tg_c * " + std::to_string(threads_) + ";");
  line("const int tg_row = tg_q / " + std::to_string(CPR) + ", tg_col = (tg_q % " + std::to_string(CPR) +
       ") * " + std::to_string(s.elems) + ";");
}

// The loads of a producer's chunks into its staging registers (`regs`).
void HipEmitter::staged_load(const Stmt& p, const StagedCopy& s, const std::string& regs) {
  const Copy* c = p->as<Copy>();
  const Buffer& g = *c->src.buffer;
  const size_t n = g.rank(), tr = c->src.tile_rank();
  std::vector<std::string> idx;
  for (const auto& o : c->src.offsets)
    idx.push_back(expr(o));
  if (tr == 2)
    idx[n - 2] = "(" + idx[n - 2] + ") + tg_row";
  idx[n - 1] = "(" + idx[n - 1] + ") + tg_col";
  op_comment(p);
  open("if constexpr (TG_VEC >= 16)");
  line("#pragma unroll");
  open("for (int tg_c = 0; tg_c < " + std::to_string(s.per) + "; ++tg_c)");
  staged_chunk(c, s);
  const std::string fits = s.chunks % threads_ != 0 ? "tg_q < " + std::to_string(s.chunks) + " && " : "";
  line(regs + "[tg_c] = " + fits + global_in_bounds(g, idx) + " ? *reinterpret_cast<const uint4*>(" +
       name(g.name) + " + " + global_index(g, idx) + ") : make_uint4(0u, 0u, 0u, 0u);");
  close();
  close();
}

// The stores of a producer's staging registers into its current stage (stage_expr_); the
// scalar kernel copies the tile synchronously instead.
void HipEmitter::staged_store(const Copy* c, const StagedCopy& s, const std::string& regs) {
  const Buffer* sb = c->dst.buffer.get();
  const std::string dst = shared_ptr(sb);
  open("if constexpr (TG_VEC >= 16)");
  line("#pragma unroll");
  open("for (int tg_c = 0; tg_c < " + std::to_string(s.per) + "; ++tg_c)");
  staged_chunk(c, s);
  if (s.chunks % threads_ != 0)
    line("if (tg_q >= " + std::to_string(s.chunks) + ") break;");
  if (s.widen) {
    line("uint4 tg_lo, tg_hi;");
    line(need("tg_widen_fp8x16") + "<" + fp8_widen_tag(c->src.buffer->dtype) + ">(" + regs +
         "[tg_c], tg_lo, tg_hi);");
    line("*reinterpret_cast<uint4*>(" + dst + " + " + shared_offset(sb, "tg_row", "tg_col") + ") = tg_lo;");
    line("*reinterpret_cast<uint4*>(" + dst + " + " + shared_offset(sb, "tg_row", "tg_col + 8") + ") = tg_hi;");
  } else {
    line("*reinterpret_cast<uint4*>(" + dst + " + " + shared_offset(sb, "tg_row", "tg_col") + ") = " + regs +
         "[tg_c];");
  }
  close();
  open_else();
  copy_global_to_shared(c, /*async=*/false, /*commit=*/false);
  close();
}

void HipEmitter::emit_pipelined(const For* f, int64_t stages) {
  const std::vector<const Buffer*> hoisted = fnuz_hoisted(f);
  for (const Buffer* acc : hoisted)
    fnuz_scale(acc, true);
  fnuz_scaled_.insert(hoisted.begin(), hoisted.end());
  emit_pipelined_loop(f, stages);
  for (const Buffer* acc : hoisted) {
    fnuz_scaled_.erase(acc);
    fnuz_scale(acc, false);
  }
}

void HipEmitter::emit_pipelined_loop(const For* f, int64_t stages) {
  const PipelineBody split = split_pipeline_body(f);
  const std::vector<Stmt>& producers = split.producers;
  const std::vector<Stmt>& consumers = split.consumers;
  bool staged = stages >= 2 && !producers.empty() && split.hoistable &&
                t_.hip.register_staged_pipeline;
  for (const auto& p : producers) // every producer's buffer holds this loop's stages
    staged = staged && slots_.at(p->as<Copy>()->dst.buffer.get()).stages == stages;
  if (!staged) { // one stage: CUDA's synchronous loop (stage 0 of each buffer)
    CudaEmitter::emit_pipelined(f, 1);
    return;
  }
  if (smem_dirty_ || smem_read_ || async_pending_)
    barrier();
  const std::string v = name(f->var->name), S = std::to_string(stages);
  const std::string start = expr(f->start, kAdd);
  open("");
  line("const int64_t tg_n = " + expr(f->extent) + ";");
  line("// " + S + "-stage LDS pipeline through registers: " +
       (stages == 2 ? std::string("tile 0") : "tiles 0.." + std::to_string(stages - 2)) +
       " first; iteration tg_it loads tile tg_it + " + std::to_string(stages - 1) +
       " into registers, computes on stage tg_it % " + S + ", then stores the registers into the stage "
       "iteration tg_it - 1 read (docs/hip.md \"Pipelines\")");
  for (int64_t s = 0; s + 1 < stages; ++s) {
    open("if (" + std::to_string(s) + " < tg_n)");
    line("const int64_t " + v + " = " + start + " + " + std::to_string(s) + ";");
    for (const auto& p : producers) {
      stage_expr_[p->as<Copy>()->dst.buffer.get()] = std::to_string(s);
      op_comment(p);
      copy_global_to_shared(p->as<Copy>(), /*async=*/false, /*commit=*/false);
    }
    close();
  }
  line(sync_threads());
  open("for (int64_t tg_it = 0; tg_it < tg_n; ++tg_it)");
  line("const int64_t tg_pf = tg_it + " + std::to_string(stages - 1) + ";");
  std::vector<StagedCopy> plans;
  std::vector<std::string> regs;
  for (size_t i = 0; i < producers.size(); ++i) {
    plans.push_back(staged_copy(producers[i]->as<Copy>()));
    regs.push_back("tg_st" + std::to_string(i));
    if (plans.back().elems > 0)
      line("uint4 " + regs.back() + "[" + std::to_string(plans.back().per) + "]; (void)" + regs.back() +
           "; // this thread's 16-byte chunks of the tile ahead");
  }
  bool any_staged = false;
  for (const auto& s : plans)
    any_staged = any_staged || s.elems > 0;
  if (any_staged) {
    open("if (tg_pf < tg_n)");
    line("const int64_t " + v + " = " + start + " + tg_pf;");
    for (size_t i = 0; i < producers.size(); ++i)
      if (plans[i].elems > 0)
        staged_load(producers[i], plans[i], regs[i]);
    close();
  }
  open("");
  line("const int64_t " + v + " = " + start + " + tg_it;");
  line("(void)" + v + ";");
  for (const auto& p : producers)
    stage_expr_[p->as<Copy>()->dst.buffer.get()] = "tg_it % " + S;
  async_pending_ = smem_dirty_ = smem_read_ = false;
  for (const auto& s : consumers)
    stmt(s);
  close();
  open("if (tg_pf < tg_n)");
  line("const int64_t " + v + " = " + start + " + tg_pf;");
  line("(void)" + v + ";");
  for (size_t i = 0; i < producers.size(); ++i) {
    const Copy* c = producers[i]->as<Copy>();
    stage_expr_[c->dst.buffer.get()] = "tg_pf % " + S;
    if (plans[i].elems > 0) {
      staged_store(c, plans[i], regs[i]);
    } else {
      op_comment(producers[i]);
      copy_global_to_shared(c, /*async=*/false, /*commit=*/false);
    }
  }
  close();
  // orders this iteration's reads of stage tg_it % S before the stores into it S - 1
  // iterations on, and its stores before the next iterations' reads
  line(sync_threads());
  async_pending_ = smem_dirty_ = smem_read_ = false;
  close();
  close();
}

} // namespace tilegen::emit
