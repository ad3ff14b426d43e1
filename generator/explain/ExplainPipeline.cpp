// The pipeline picture of tilegen explain: the first pipelined loop of the kernel as a timeline
// of its first iterations, drawn after the schedule the CUDA emitter writes (CudaKernel.cpp's
// cp.async prologue and per-iteration wait/barrier/refill; docs/hopper.md's producer warp and
// full/empty mbarriers) and the plan's decisions (TmaPipeline: stages, consumer groups).
#include "explain/Explain.h"
#include "explain/ExplainWalk.h"
#include "explain/Svg.h"

#include "ir/Simplify.h"
#include "support/TextEscape.h"

#include <algorithm>

namespace tilegen::explain {

namespace {

std::string s(int64_t v) { return std::to_string(v); }

enum class Mode { CpAsync, Tma, Registers, Sync, Serial };

const char* mode_name(Mode m) {
  switch (m) {
  case Mode::CpAsync: return "cp.async";
  case Mode::Tma: return "tma";
  case Mode::Registers: return "registers";
  case Mode::Sync: return "sync";
  case Mode::Serial: return "serial";
  }
  return "";
}

struct Timeline {
  static constexpr int kLeft = 190, kCol = 104, kRow = 40, kTop = 70, kBox = 28;
  std::string svg;
  int rows = 0, cols = 0;

  int x(int col) const { return kLeft + col * kCol; }
  int y(int row) const { return kTop + row * kRow; }
  void lane(int row, const std::string& label) {
    rows = std::max(rows, row + 1);
    svg += svg::text_left(6, y(row) + kBox / 2 + 4, label, 11) + "\n";
  }
  void box(int row, int col, int64_t slot, int64_t stages, const std::string& label,
           const std::string& cls) {
    cols = std::max(cols, col + 1);
    svg += svg::rect(x(col) + 2, y(row), kCol - 4, kBox, svg::hue_color(slot, stages, 80),
                     "class=\"" + cls + "\" data-slot=\"" + s(slot) +
                         "\" stroke=\"#444\" rx=\"4\"") +
           svg::text(x(col) + kCol / 2, y(row) + kBox / 2 + 4, label, 10) + "\n";
  }
  void barrier(int col, int from_row, int to_row, const std::string& label) {
    svg += svg::line(x(col), y(from_row) - 6, x(col), y(to_row) + kBox + 6, "#c00000",
                     "class=\"barrier\" stroke-dasharray=\"4,3\" stroke-width=\"1.5\"") +
           svg::text(x(col), y(from_row) - 9, label, 8, "fill=\"#c00000\"") + "\n";
  }
  void mark(int row, int col, const std::string& label) { // an mbarrier arrive at a box's end
    int cx = x(col) + kCol - 4, cy = y(row) + kBox + 2;
    svg += "<circle class=\"arrive\" cx=\"" + s(cx) + "\" cy=\"" + s(cy) +
           "\" r=\"4\" fill=\"#2a7\"/>" +
           svg::text(cx - 26, cy + 12, label, 8, "fill=\"#176\"") + "\n";
  }
};

// The stage ring: one box per slot with the buffers a slot holds.
std::string ring(int64_t stages, const std::vector<const ir::Buffer*>& fills) {
  std::string names;
  for (const ir::Buffer* b : fills)
    names += (names.empty() ? "" : ", ") + b->name;
  std::string out = svg::text_left(6, 30, "stage ring", 11) + "\n";
  for (int64_t i = 0; i < stages; ++i) {
    int x = Timeline::kLeft + static_cast<int>(i) * 120;
    out += svg::rect(x, 12, 112, 30, svg::hue_color(i, stages, 80),
                     "class=\"slot\" data-slot=\"" + s(i) + "\" stroke=\"#444\" rx=\"4\"") +
           svg::text(x + 56, 25, "slot " + s(i), 10) +
           svg::text(x + 56, 37, names.empty() ? "-" : names, 9) + "\n";
  }
  return out;
}

int64_t buffer_bytes(const ir::Buffer& b) {
  int64_t n = b.dtype.bytes();
  for (const auto& d : b.shape)
    n *= ir::as_const_int(d).value_or(0);
  return n;
}

} // namespace

Section pipeline_section(const ExplainInput& in) {
  Section sec;
  sec.id = "pipeline";
  sec.title = "Main loop pipeline";
  const Target& t = *in.target;
  Walk w = walk(in.kernel->body);
  if (w.pipelined.empty()) {
    sec.lines.push_back("This kernel has no pipelined loop: no pipeline to draw.");
    return sec;
  }
  const ir::For* f = w.pipelined.front();
  Walk body = walk(f->body);
  int64_t requested = ir::as_const_int(f->stages).value_or(1);
  const passes::TmaPipeline* tma = nullptr;
  if (in.plan) {
    auto it = in.plan->tma_loops.find(f);
    if (it == in.plan->tma_loops.end())
      for (auto j = in.plan->tma_loops.begin(); j != in.plan->tma_loops.end(); ++j)
        if (j->first->loc.line == f->loc.line && j->first->loc.col == f->loc.col)
          it = j;
    if (it != in.plan->tma_loops.end())
      tma = &it->second;
  }
  Mode mode = tma                                                         ? Mode::Tma
              : !t.has_thread_layouts() && t.backend != Backend::WGSL     ? Mode::Serial
              : t.gpu.async_copy != AsyncCopy::None && requested >= 2 ? Mode::CpAsync
              : t.hip.register_staged_pipeline && requested >= 2      ? Mode::Registers
                                                                        : Mode::Sync;
  int64_t stages = mode == Mode::Tma                                  ? tma->stages
                   : mode == Mode::CpAsync || mode == Mode::Registers ? requested
                                                                      : 1;
  sec.lines.push_back("Loop `" + f->var->name + "` at " + f->loc.str() + ", " +
                      s(requested) + " stage" + (requested == 1 ? "" : "s") +
                      " requested by the schedule; " + s(stages) + " in the generated code.");
  int64_t per_stage = 0;
  std::string fills;
  for (const ir::Buffer* b : body.fills) {
    per_stage += buffer_bytes(*b);
    fills += (fills.empty() ? "" : " + ") + b->name + " (" + s(buffer_bytes(*b)) + " B)";
  }
  if (!fills.empty())
    sec.lines.push_back("A stage holds " + fills + " = " + s(per_stage) + " B; " + s(stages) +
                        " stage" + (stages == 1 ? "" : "s") + ": " + s(per_stage * stages) +
                        " B of shared memory.");
  switch (mode) {
  case Mode::CpAsync:
    sec.lines.push_back(
        "cp.async multistage: the prologue issues iterations 0.." + s(stages - 2) +
        "; iteration k waits until its group has landed (cp.async.wait_group " + s(stages - 2) +
        ") and for every thread at one __syncthreads (red), which also says slot (k-1) % " +
        s(stages) + " is consumed, so iteration k+" + s(stages - 1) +
        " is issued into it while k computes. Colors are stage slots.");
    break;
  case Mode::Tma:
    sec.lines.push_back(
        "Warp-specialized: one producer warp issues each iteration's tiles as TMA boxes "
        "(cp.async.bulk.tensor) into slot k % " + s(stages) +
        " and they complete on the slot's full mbarrier; the consumer warpgroup" +
        (tma->groups > 1 ? "s wait on full[s], run the gemms (wgmma) and arrive"
                         : " waits on full[s], runs the gemms (wgmma) and arrives") +
        " on empty[s] (green) so the producer may refill the slot. Colors are stage slots.");
    if (tma->groups > 1)
      sec.lines.push_back("Two consumer groups (ping-pong): each takes alternate output tiles of "
                          "the persistent loop from the same ring, so one group's epilogue "
                          "overlaps the other's wgmmas.");
    if (!tma->prologue.empty())
      sec.lines.push_back(s(static_cast<int64_t>(tma->prologue.size())) +
                          " copy(ies) before the loop are TMA boxes issued once per tile on "
                          "their own full/empty mbarriers (e.g. attention's Q tile).");
    break;
  case Mode::Registers:
    sec.lines.push_back(
        std::string("No asynchronous copies on ") + t.name +
        ": a register-staged pipeline (docs/hip.md \"Pipelines\"). The prologue copies iterations "
        "0.." + s(stages - 2) + "; iteration k loads tile k+" + s(stages - 1) +
        " from global memory into registers, computes on slot k % " + s(stages) +
        ", then stores the registers into slot (k+" + s(stages - 1) + ") % " + s(stages) +
        " (the one k-1 read) and waits at one __syncthreads (red). Colors are stage slots.");
    break;
  case Mode::Sync:
    sec.lines.push_back(
        std::string("No asynchronous copies on ") + t.name +
        (requested > 1 ? " (the schedule's stages act as 1)" : "") +
        ": each iteration copies its tiles through registers, waits at a barrier, computes, "
        "and waits again before the next copy overwrites the buffers.");
    break;
  case Mode::Serial:
    sec.lines.push_back("C targets run the loop in order in one thread per block: copy, then "
                        "compute, no overlap and no barriers.");
    break;
  }

  Timeline tl;
  std::string gemm = body.gemms.empty() ? "compute" : mode == Mode::Tma ? "wgmma" : "gemm";
  int64_t iters = std::max<int64_t>(4, stages + 3);
  std::string bar = t.backend == Backend::Metal ? "threadgroup_barrier"
                    : t.backend == Backend::WGSL ? "workgroupBarrier"
                                                 : "__syncthreads";
  switch (mode) {
  case Mode::CpAsync: {
    tl.lane(0, "copies (cp.async, all threads)");
    tl.lane(1, "compute (" + gemm + ")");
    for (int64_t j = 0; j + 1 < stages; ++j)
      tl.box(0, static_cast<int>(j), j, stages, "load k=" + s(j), "stage-load");
    for (int64_t k = 0; k < iters; ++k) {
      int col = static_cast<int>(stages - 1 + k);
      tl.barrier(col, 0, 1, "wait+" + bar);
      int64_t next = k + stages - 1;
      tl.box(0, col, next % stages, stages, "load k=" + s(next), "stage-load");
      tl.box(1, col, k % stages, stages, gemm + " k=" + s(k), "stage-compute");
    }
    break;
  }
  case Mode::Registers: {
    tl.lane(0, "copies (global -> registers -> LDS, all threads)");
    tl.lane(1, "compute (" + gemm + ")");
    for (int64_t j = 0; j + 1 < stages; ++j)
      tl.box(0, static_cast<int>(j), j, stages, "copy k=" + s(j), "stage-load");
    for (int64_t k = 0; k < iters; ++k) {
      int col = static_cast<int>(stages - 1 + k);
      tl.barrier(col, 0, 1, bar);
      int64_t next = k + stages - 1;
      tl.box(0, col, next % stages, stages, "load+store k=" + s(next), "stage-load");
      tl.box(1, col, k % stages, stages, gemm + " k=" + s(k), "stage-compute");
    }
    break;
  }
  case Mode::Tma: {
    tl.lane(0, "producer warp (TMA)");
    tl.lane(1, "consumer warpgroup" + std::string(tma->groups > 1 ? "s (this tile's group)" : "s"));
    for (int64_t k = 0; k < iters; ++k) {
      int64_t slot = k % stages;
      tl.box(0, static_cast<int>(k), slot, stages, "TMA k=" + s(k), "stage-load");
      if (k >= stages) // the slot's previous tile must be consumed first
        tl.svg += svg::text(tl.x(static_cast<int>(k)) + Timeline::kCol / 2,
                            tl.y(0) - 4, "waits empty[" + s(slot) + "]", 8,
                            "fill=\"#c00000\"") + "\n";
      tl.mark(0, static_cast<int>(k), "full[" + s(slot) + "]");
      tl.box(1, static_cast<int>(k + 1), slot, stages, gemm + " k=" + s(k), "stage-compute");
      tl.mark(1, static_cast<int>(k + 1), "empty[" + s(slot) + "]");
    }
    break;
  }
  case Mode::Sync:
  case Mode::Serial: {
    tl.lane(0, "copies (all threads)");
    tl.lane(1, "compute (" + gemm + ")");
    for (int64_t k = 0; k < iters; ++k) {
      int col = static_cast<int>(2 * k);
      tl.box(0, col, 0, 1, "load k=" + s(k), "stage-load");
      if (mode == Mode::Sync)
        tl.barrier(col + 1, 0, 1, bar);
      tl.box(1, col + 1, 0, 1, gemm + " k=" + s(k), "stage-compute");
      if (mode == Mode::Sync)
        tl.barrier(col + 2, 0, 1, bar);
    }
    break;
  }
  }
  Picture p;
  p.svg = ring(stages, body.fills) + tl.svg;
  p.width = Timeline::kLeft + std::max(tl.cols * Timeline::kCol, static_cast<int>(stages) * 120) + 20;
  p.height = Timeline::kTop + tl.rows * Timeline::kRow + 20;
  p.attrs = "class=\"pipeline\" data-kind=\"" + std::string(mode_name(mode)) +
            "\" data-stages=\"" + s(stages) + "\" data-requested-stages=\"" + s(requested) +
            "\"" + (tma ? " data-consumer-groups=\"" + s(tma->groups) + "\"" : "");
  sec.pictures.push_back(std::move(p));
  return sec;
}

} // namespace tilegen::explain
