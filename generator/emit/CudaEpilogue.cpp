// Epilogue staging (see CudaEmitter.h, tma_store_ / threads_store_): the once-per-tile copy of a
// fragment into a 16-bit global tile goes through a staging tile in shared memory.
//
// The consumers write their registers into it in the 128-byte-swizzled layout a TMA box with
// CU_TENSOR_MAP_SWIZZLE_128B reads (panels of 128 bytes of columns, 16-byte chunk c of row r at
// c ^ (r % 8), so a warp's stores hit 32 distinct banks), whatever the panel width of the
// gemm operands (128, 64 or 32 bytes: passes/LayoutInference.h); an output tile that is no
// whole number of 128-byte panels keeps direct stores. Then:
// * warp-specialized sm_90a kernels fence the writes for the async proxy and one thread issues
//   one cp.async.bulk.tensor store per panel; the store drains while the consumers run the next
//   tile's main loop. Before writing the staging tile again the issuing thread waits until the
//   previous store has read it (bulk wait_group.read), and the kernel's end waits for the last
//   one. TMA clips the boxes at the tensor's edges. Where each consumer warpgroup holds its own
//   rows of the tile (the wgmma accumulators: warpgroup w rows [64 w, 64 w + 64)), each
//   warpgroup does all of this for its rows alone, behind its own named barrier, and one of
//   its threads issues boxes of its rows: nothing holds the warpgroups together between tiles,
//   so the first done with its stores starts the next tile's wgmmas while the other still
//   stores (the promoted FP8 GEMMs; H200, bench/RESULTS.md 2026-12-02: FP8 8192^3 1% faster
//   than the group's shared stores). Not where the warpgroups take turns or the stages are
//   released an iteration late (plan_epilogue_store).
// * other kernels (no TMA) synchronize and store the tile as 16-byte row chunks.
#include "emit/CudaEmitter.h"

#include "ir/IRVisitor.h"
#include "support/InternalError.h"

#include <sstream>

namespace tilegen::emit {

using namespace ir;

namespace {

// Copies from a fragment to a global tile that run once per tile (outside every loop).
struct EpilogueCopies : IRVisitor {
  std::vector<const Copy*> found;
  int loops = 0;

protected:
  void visit_For(const For* f) override {
    ++loops;
    IRVisitor::visit_For(f);
    --loops;
  }
  void visit_Copy(const Copy* c) override {
    if (loops == 0 && c->src.buffer->scope == MemScope::Fragment &&
        c->dst.buffer->scope == MemScope::Global)
      found.push_back(c);
    IRVisitor::visit_Copy(c);
  }
};

int64_t const_of(const Expr& e) {
  auto* i = e ? e->as<IntImm>() : nullptr;
  return i ? i->value : -1;
}

// Whether staging addresses split into a per-thread base plus per-register constants: a
// thread's column part stays inside one 16-byte chunk of V elements (with the register part
// below V), and its row registers move by multiples of the 8-row swizzle period. The mma
// accumulator of one warp column (attention, the wgmma tiles) has it; 2x2 warp grids do not.
bool split_addressing(const layout::FragmentLayout& L, int64_t V) {
  int64_t t1_max = 0;
  auto m = L.dim_map(1);
  for (size_t i = 0; i < m.thread_sizes.size(); ++i)
    t1_max += (m.thread_sizes[i] - 1) * m.thread_strides[i];
  bool split = true;
  for (int64_t r = 0; r < L.regs_of_dim(0); ++r)
    split = split && L.reg_coord(0, r) % 8 == 0;
  for (int64_t r = 0; r < L.regs_of_dim(1); ++r)
    split = split && t1_max + L.reg_coord(1, r) % V < V;
  return split;
}

// The rows R each consumer warpgroup holds alone, where the fragment gives warpgroup w exactly
// rows [w R, (w + 1) R) of the tile in every register (R a multiple of the 8-row swizzle
// period); 0 otherwise, or with one warpgroup.
int64_t warpgroup_rows(const layout::FragmentLayout& L, int64_t rows, int64_t threads) {
  const int64_t W = threads / 128;
  if (W < 2 || threads % 128 != 0 || L.threads() != threads || rows % W != 0 || rows / W % 8 != 0)
    return 0;
  const int64_t R = rows / W;
  for (int64_t t = 0; t < threads; ++t)
    for (int64_t r = 0; r < L.regs_of_dim(0); ++r) {
      const int64_t row = L.thread_coord(0, t) + L.reg_coord(0, r);
      if (row < 0 || row / R != t / 128)
        return 0;
    }
  return R;
}

} // namespace

void CudaEmitter::plan_epilogue_store() {
  tma_store_ = threads_store_ = nullptr;
  store_wg_rows_ = 0;
  if (ws() && groups() != 1)
    return;
  EpilogueCopies v;
  v.visit(k_.body);
  if (v.found.size() != 1)
    return;
  const Copy* c = v.found.front();
  const Buffer& g = *c->dst.buffer;
  const auto& L = frag(c->src.buffer.get());
  const int64_t rows = c->dst.tile_rank() == 2 ? const_of(c->dst.extents[0]) : -1;
  const int64_t cols = c->dst.tile_rank() == 2 ? const_of(c->dst.extents[1]) : -1;
  const int64_t pc = passes::kPanelBytes / g.dtype.bytes();
  if (!g.dtype.is_16bit_float() || g.rank() < 2 || g.rank() > 5 || L.rank() != 2 || rows <= 0 ||
      rows > 256 || rows % 8 != 0 || cols <= 0 || cols % pc != 0 || !replica_leader(L).empty())
    return;
  // After everything else (the mbarriers); 1024-byte aligned like every swizzled tile.
  const int64_t off = (smem_bytes_ + 1023) / 1024 * 1024;
  const int64_t total = off + rows * cols * g.dtype.bytes();
  const int64_t panels = cols / pc, panel_bytes = rows * pc * g.dtype.bytes();
  // The staging tile holds `slots` of the tile's panels (all of them but in the TMA ring).
  auto take = [&](int64_t slots, const std::string& note) {
    store_offset_ = off;
    store_rows_ = rows;
    store_cols_ = cols;
    store_slots_ = slots;
    smem_bytes_ = off + slots * panel_bytes;
    plan_.notes.push_back("epilogue: " + note);
    // The shifted copies' staging rows (tg_kernel<2>) go behind everything the other kernels
    // use, the staging tile included: planned before it, they overlapped it and tg_kernel<2>
    // launched with less shared memory than its epilogue writes.
    plan_shift_copies();
  };
  const std::string whole = std::to_string(rows) + "x" + std::to_string(cols) + " " + g.dtype.name() +
                            " staging tile at byte " + std::to_string(off);
  if (!ws()) {
    // Without TMA: the threads store the staged tile as 16-byte rows. Only where two blocks
    // still fit on an SM (the tile costs occupancy otherwise), and only with split addresses:
    // the general per-register address formula made gemm_bias_gelu's 4-warp sm_90 kernel (255
    // registers) spill 52 bytes.
    const int64_t per_sm = t_.gpu.smem_per_sm > 0 ? t_.gpu.smem_per_sm : t_.gpu.smem_per_block;
    if (2 * (total + 1024) > per_sm || total > t_.gpu.smem_per_block ||
        !split_addressing(L, 16 / g.dtype.bytes()))
      return;
    threads_store_ = c;
    take(panels, whole + ", stored by the block as 16-byte rows");
    return;
  }
  // Each warpgroup its own rows, but not
  // * where the warpgroups take turns (attention): the group's barrier in the epilogue is what
  //   keeps one warpgroup from arriving at the next tile's first turn before the other has
  //   taken this tile's last one;
  // * where the stages are released an iteration late (a body of wgmmas alone, one group in
  //   flight: the bf16 GEMMs): a warpgroup that starts a tile ahead of the other stays ahead,
  //   and the stages it may read before the other releases theirs are one fewer. H200
  //   (bench/RESULTS.md 2026-12-02), bf16 with per-warpgroup stores against the group's:
  //   4096x4096x512 3-4% faster, 4096^3 0-1.6%, but 8192^3 0.6-5% slower.
  const int64_t wg_rows = warpgroups_take_turns() || stages_released_late() ? 0 : warpgroup_rows(L, rows, threads_);
  const std::string by_wg = wg_rows > 0 ? ", each warpgroup its own " + std::to_string(wg_rows) + " rows" : "";
  if (total + 1024 <= t_.gpu.smem_per_block) {
    tma_store_ = c;
    store_wg_rows_ = wg_rows;
    take(panels, whole + ", TMA store (" + std::to_string(panels) + " box(es) of " + std::to_string(pc) +
                     " columns" + by_wg + ") overlapping the next tile");
    return;
  }
  // A ring of panel slots where the whole tile does not fit (gemm's 128x256 tile beside 4
  // stages): at least two, so that a panel's store reads one slot while the next panel is
  // written into another, and a divisor of the panels, so that a slot's previous store is
  // always the one `slots` stores back (tg_bulk_wait_read<slots - 1>). The addresses must split
  // (the panel of every register known when the loop is unrolled).
  int64_t slots = (t_.gpu.smem_per_block - 1024 - off) / panel_bytes;
  while (slots > 1 && panels % slots != 0)
    --slots;
  if (slots < 2 || !split_addressing(L, 16 / g.dtype.bytes())) {
    plan_.notes.push_back("epilogue: direct stores (a " + std::to_string(rows) + "x" +
                          std::to_string(cols) + " TMA-store staging tile would need " +
                          std::to_string(total + 1024) + " bytes of shared memory, and fewer than two " +
                          std::to_string(pc) + "-column panels fit)");
    return;
  }
  tma_store_ = c;
  store_wg_rows_ = wg_rows;
  take(slots, std::to_string(slots) + " staging panels of " + std::to_string(rows) + "x" + std::to_string(pc) +
                  " " + g.dtype.name() + " at byte " + std::to_string(off) + " (the " + std::to_string(rows) +
                  "x" + std::to_string(cols) + " tile does not fit), TMA store per panel (" +
                  std::to_string(panels) + " box(es)" + by_wg + ") overlapping the next panel's writes and the next tile");
}

void CudaEmitter::stage_fragment(const Copy* c, int64_t panel) {
  const Buffer& g = *c->dst.buffer;
  const Buffer& f = *c->src.buffer;
  const auto& L = frag(&f);
  const int64_t eb = g.dtype.bytes(), pc = passes::kPanelBytes / eb, V = 16 / eb;
  int64_t vec = 1;
  if (!L.regs[1].empty() && L.regs[1][0].stride == 1)
    vec = L.regs[1][0].size;
  while (vec > 1 && (vec * eb > 16 || V % vec != 0))
    vec /= 2;
  const std::string st = storage_type_name(g.dtype);
  const std::string PC = std::to_string(pc), VS = std::to_string(V);
  declare_thread_coords(L);
  const int64_t R0 = L.regs_of_dim(0), R1 = L.regs_of_dim(1);
  // Split addresses where the layout allows them: the swizzle term and the thread's offset are
  // computed once and each register adds a constant (the general formula per register cost 8
  // spilled bytes in attention's sm_90a epilogue).
  const bool split = split_addressing(L, V);
  if (split) {
    line("const int tg_sw = tg_t0 % 8; // the swizzle of every row this thread holds");
    line("const int tg_base = tg_t0 * " + PC + " + tg_t1;");
  }
  line("#pragma unroll");
  open("for (int tg_r0 = 0; tg_r0 < " + std::to_string(R0) + "; ++tg_r0)");
  line("#pragma unroll");
  open("for (int tg_g = 0; tg_g < " + std::to_string(R1 / vec) + "; ++tg_g)");
  line("const int tg_r1 = tg_g * " + std::to_string(vec) + ";");
  if (split) {
    line("const int tg_rr = " + reg_coord(L, 0, "tg_r0") + ", tg_rc = " + reg_coord(L, 1, "tg_r1") + ";");
    if (panel >= 0) // a constant test once unrolled
      line("if (tg_rc / " + PC + " != " + std::to_string(panel) + ") continue;");
    line("const int tg_at = tg_base + " +
         (panel >= 0 ? std::string() : "tg_rc / " + PC + " * " + std::to_string(store_rows_ * pc) + " + ") +
         "tg_rr * " + PC + " + (((tg_rc % " + PC + ") / " + VS + ") ^ tg_sw) * " + VS + " + tg_rc % " + VS + ";");
  } else {
    TG_ASSERT(panel < 0, "a staging panel ring needs split addresses");
    line("const int tg_row = tg_t0 + " + reg_coord(L, 0, "tg_r0") + ", tg_col = tg_t1 + " +
         reg_coord(L, 1, "tg_r1") + ";");
    line("const int tg_c = tg_col % " + PC + ";");
    line("const int tg_at = tg_col / " + PC + " * " + std::to_string(store_rows_ * pc) + " + tg_row * " +
         PC + " + ((tg_c / " + VS + ") ^ (tg_row % 8)) * " + VS + " + tg_c % " + VS + ";");
  }
  const std::string reg0 = "tg_r0 * " + std::to_string(R1) + " + tg_r1";
  if (vec > 1) {
    line(st + " tg_x[" + std::to_string(vec) + "];");
    line("#pragma unroll");
    open("for (int tg_e = 0; tg_e < " + std::to_string(vec) + "; ++tg_e)");
    line("tg_x[tg_e] = " + from_float(to_float(name(f.name) + "[" + reg0 + " + tg_e]", f.dtype), g.dtype) + ";");
    close();
    const std::string vt = vec * eb == 4 ? "uint32_t" : vec * eb == 8 ? "uint2" : "uint4";
    line("*reinterpret_cast<" + vt + "*>(tg_stage + tg_at) = *reinterpret_cast<const " + vt + "*>(tg_x);");
  } else {
    line("tg_stage[tg_at] = " + from_float(to_float(name(f.name) + "[" + reg0 + "]", f.dtype), g.dtype) + ";");
  }
  close();
  close();
}

void CudaEmitter::emit_tma_store(const Copy* c) {
  const Buffer& g = *c->dst.buffer;
  const int64_t pc = passes::kPanelBytes / g.dtype.bytes();
  const size_t n = g.rank();
  const std::string st = storage_type_name(g.dtype);
  open("");
  line("// epilogue: registers -> swizzled staging tile -> TMA store; the store drains while the");
  line("// next tile's main loop runs");
  const int64_t panels = store_cols_ / pc, slot = store_rows_ * pc;
  const std::string store = need("tg_tma_store_" + std::to_string(n) + "d");
  // Per warpgroup (store_wg_rows_): warpgroup tg_tid / 128 waits, synchronizes and issues for
  // its rows alone (named barrier kWgStoreBarrier + warpgroup, clear of the consumer groups'
  // and the turns' barriers); its boxes start at its first row of the staging panels.
  const bool per_wg = store_wg_rows_ > 0;
  const std::string issuer = store_issuer();
  const std::string sync = per_wg ? need("tg_bar_sync_n") + "(" + std::to_string(kWgStoreBarrier) + " + tg_tid / 128, 128);"
                                  : need("tg_bar_consumers") + "(tg_grp);";
  const std::string wg_row = per_wg ? "(tg_tid / 128) * " + std::to_string(store_wg_rows_) : "";
  const std::string wg_at = per_wg ? " + (tg_tid / 128) * " + std::to_string(store_wg_rows_ * pc) : "";
  // One round: wait until the staging memory's previous store has read it (at most `reading`
  // stores still reading), write the registers of `panel` (-1: all), fence them for the async
  // proxy, and issue the round's boxes as one bulk group.
  auto round = [&](const std::string& base, int64_t reading, const std::string& why, int64_t panel,
                   const std::vector<std::string>& boxes) {
    line(st + "* tg_stage = (" + st + "*)(tg_smem + " + std::to_string(store_offset_) + ")" + base + ";");
    line("if (" + issuer + ") " + need("tg_bulk_wait_read") + "<" + std::to_string(reading) + ">(); // " + why);
    line(sync);
    stage_fragment(c, panel);
    line(need("tg_fence_proxy_async") + "();");
    line(sync);
    if (per_wg)
      line("// this warpgroup's rows");
    open("if (" + issuer + ")");
    for (const auto& b : boxes)
      line(store + "(&tg_p.tg_tm_out, " + b + ");");
    line(need("tg_bulk_commit") + "();");
    close();
  };
  if (store_slots_ == panels) {
    std::vector<std::string> boxes;
    for (int64_t p = 0; p < panels; ++p)
      boxes.push_back("tg_stage + " + std::to_string(p * slot) + wg_at + tma_coords(c->dst, p * pc, wg_row));
    round("", 0, "the last tile's store has read it", -1, boxes);
    close();
    return;
  }
  // A ring of store_slots_ panel slots: panel p in slot p % slots, each panel's store its own
  // bulk group, so the slot's previous store (this tile's or the last tile's) is the one
  // `slots` groups back.
  line("// " + std::to_string(store_slots_) + " slots of one panel: each panel's store reads its slot while the next");
  line("// panel is written");
  for (int64_t p = 0; p < panels; ++p) {
    open("");
    round(" + " + std::to_string(p % store_slots_ * slot), store_slots_ - 1,
          "the slot's previous store has read it", p, {"tg_stage" + wg_at + tma_coords(c->dst, p * pc, wg_row)});
    close();
  }
  close();
}

// Without TMA: after a barrier, consecutive threads move consecutive 16-byte chunks of the
// staged tile's rows (a warp writes 512 contiguous bytes of a 256-byte-or-longer row segment),
// each chunk bounds-checked as a whole; with 4-byte aligned tensors (TG_VEC 4) a chunk is four
// 32-bit stores; chunks at a ragged edge, and every chunk of the scalar kernel (TG_VEC 0: the
// tensor may be misaligned), go element by element.
void CudaEmitter::emit_staged_store(const Copy* c) {
  const Buffer& g = *c->dst.buffer;
  const int64_t pc = passes::kPanelBytes / g.dtype.bytes(), V = 16 / g.dtype.bytes();
  const size_t n = g.rank();
  const std::string st = storage_type_name(g.dtype);
  const int64_t chunks_per_row = store_cols_ / V, chunks = store_rows_ * chunks_per_row;
  before_shared_write();
  open("");
  line("// epilogue: registers -> swizzled staging tile -> 16-byte row stores");
  line(st + "* tg_stage = (" + st + "*)(tg_smem + " + std::to_string(store_offset_) + ");");
  stage_fragment(c);
  barrier();
  smem_read_ = true;
  std::vector<std::string> off;
  for (const auto& o : c->dst.offsets)
    off.push_back(expr(o));
  // Interior tiles (the whole tile inside the tensor, tested once) skip the bounds checks.
  auto chunk_loop = [&](bool checked) {
    line("#pragma unroll 4");
    open("for (int tg_q = tg_tid; tg_q < " + std::to_string(chunks) + "; tg_q += " + std::to_string(threads_) + ")");
    line("const int tg_row = tg_q / " + std::to_string(chunks_per_row) + ", tg_cc = tg_q % " +
         std::to_string(chunks_per_row) + " * " + std::to_string(V) + ";");
    line("const uint4 tg_v = *reinterpret_cast<const uint4*>(tg_stage + tg_cc / " + std::to_string(pc) +
         " * " + std::to_string(store_rows_ * pc) + " + tg_row * " + std::to_string(pc) + " + (((tg_cc % " +
         std::to_string(pc) + ") / " + std::to_string(V) + ") ^ (tg_row % 8)) * " + std::to_string(V) + ");");
    std::vector<std::string> idx(off.begin(), off.end());
    idx[n - 2] = "(" + off[n - 2] + ") + tg_row";
    idx[n - 1] = "(" + off[n - 1] + ") + tg_cc";
    line("const int64_t tg_col = " + idx[n - 1] + ";");
    idx[n - 1] = "tg_col";
    const std::string whole = checked ? " && " + global_in_bounds(g, idx) + " && tg_col + " +
                                            std::to_string(V) + " <= " + expr(g.shape[n - 1])
                                      : "";
    open("if (TG_VEC >= 16" + whole + ")");
    line("*reinterpret_cast<uint4*>(" + name(g.name) + " + " + global_index(g, idx) + ") = tg_v;");
    // 4-byte aligned tensors (the TG_VEC 4 kernel): the chunk as four 32-bit stores
    const bool narrow = g.dtype.bytes() <= 2;
    if (narrow) {
      open_else();
      open("if (TG_VEC >= 4" + whole + ")");
      line("uint32_t* tg_w = reinterpret_cast<uint32_t*>(" + name(g.name) + " + " + global_index(g, idx) + ");");
      line("tg_w[0] = tg_v.x, tg_w[1] = tg_v.y, tg_w[2] = tg_v.z, tg_w[3] = tg_v.w;");
    }
    open_else();
    line("#pragma unroll");
    open("for (int tg_e = 0; tg_e < " + std::to_string(V) + "; ++tg_e)");
    std::vector<std::string> ix = idx;
    ix[n - 1] = "tg_col + tg_e";
    line((checked ? "if (" + global_in_bounds(g, ix) + ") " : std::string()) + name(g.name) + "[" +
         global_index(g, ix) + "] = reinterpret_cast<const " + st + "*>(&tg_v)[tg_e];");
    close();
    close();
    if (narrow)
      close();
    close();
  };
  if (const Expr inside = region_in_bounds(c->dst, ranges_)) {
    open("if (" + expr(inside) + ")");
    chunk_loop(false);
    open_else();
    chunk_loop(true);
    close();
  } else {
    chunk_loop(true);
  }
  close();
}

std::string CudaEmitter::tma_store_helpers_source() const {
  std::ostringstream os;
  auto has = [&](const std::string& h) { return helpers_.count(h) > 0; };
  for (int n = 2; n <= 5; ++n) {
    std::string h = "tg_tma_store_" + std::to_string(n) + "d";
    if (!has(h))
      continue;
    const auto [params, regs, ops] = tma_coord_operands(n, 2);
    os << "/* TMA store: one box of tensor map `map` at coordinates (c0 innermost) from shared memory;\n"
          " * the parts outside the tensor are not written. Completes in a bulk async-group. */\n"
       << "TG_DEV void " << h << "(const CUtensorMap* map, const void* src" << params << ") {\n"
       << "  asm volatile(\"cp.async.bulk.tensor." << n << "d.global.shared::cta.bulk_group [%0, {"
       << regs << "}], [%1];\\n\"\n"
       << "               ::\"l\"(map), \"r\"((unsigned)__cvta_generic_to_shared(src))" << ops
       << " : \"memory\");\n}\n";
  }
  if (has("tg_bulk_commit") || has("tg_bulk_wait_read") || has("tg_bulk_wait"))
    os << "TG_DEV void tg_bulk_commit() { asm volatile(\"cp.async.bulk.commit_group;\\n\" ::: \"memory\"); }\n"
          "/* At most N bulk groups still reading shared memory / still pending at all. */\n"
          "template <int N> TG_DEV void tg_bulk_wait_read() { asm volatile(\"cp.async.bulk.wait_group.read %0;\\n\" ::\"n\"(N) : \"memory\"); }\n"
          "template <int N> TG_DEV void tg_bulk_wait() { asm volatile(\"cp.async.bulk.wait_group %0;\\n\" ::\"n\"(N) : \"memory\"); }\n";
  return os.str();
}

// The consumer thread that issues, waits for and drains the TMA stores: the group's first, or
// each warpgroup's first where each stores its own rows.
std::string CudaEmitter::store_issuer() const {
  return store_wg_rows_ > 0 ? "tg_tid % 128 == 0" : "tg_tid == 0";
}

// Host code: the store's tensor map (a box of one 128-byte panel by the tile's rows, or by a
// warpgroup's rows where each stores its own).
std::string CudaEmitter::tma_store_setup_source() {
  if (!tma_store_)
    return "";
  const Buffer& g = *tma_store_->dst.buffer;
  return "    /* the epilogue's TMA store into " + g.name + " */\n" +
         encode_tensor_map(g, passes::kPanelBytes / g.dtype.bytes(), store_wg_rows_ > 0 ? store_wg_rows_ : store_rows_,
                           "tg_tm_out", "NONE");
}

} // namespace tilegen::emit
