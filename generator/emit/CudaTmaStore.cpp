// The TMA-store epilogue of warp-specialized (sm_90a) kernels; see CudaEmitter.h, tma_store_.
//
// The consumers write their registers into a 128-byte-swizzled staging tile (the layout a TMA
// box with CU_TENSOR_MAP_SWIZZLE_128B reads: panels of 128 bytes of columns, 16-byte chunk c
// of row r at c ^ (r % 8), so a warp's stores hit 32 distinct banks), fence the writes for
// the async proxy, and one thread issues one cp.async.bulk.tensor store per panel. The store
// drains while the consumers run the next tile's main loop; before writing the staging tile
// again, the issuing thread waits until the previous store has read it (bulk wait_group.read),
// and the kernel's end waits for the last one. TMA clips the boxes at the tensor's edges.
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

} // namespace

void CudaEmitter::plan_tma_store() {
  tma_store_ = nullptr;
  if (!ws() || groups() != 1)
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
  // After the mbarriers; 1024-byte aligned like every swizzled tile.
  const int64_t off = (smem_bytes_ + 1023) / 1024 * 1024;
  const int64_t total = off + rows * cols * g.dtype.bytes();
  if (total + 1024 > t_.gpu.smem_per_block) {
    plan_.notes.push_back("epilogue: direct stores (a " + std::to_string(rows) + "x" +
                          std::to_string(cols) + " TMA-store staging tile would need " +
                          std::to_string(total + 1024) + " bytes of shared memory)");
    return;
  }
  tma_store_ = c;
  store_offset_ = off;
  store_rows_ = rows;
  store_cols_ = cols;
  smem_bytes_ = total;
  plan_.notes.push_back("epilogue: " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
                        g.dtype.name() + " staging tile at byte " + std::to_string(off) +
                        ", TMA store (" + std::to_string(cols / pc) + " box(es) of " +
                        std::to_string(pc) + " columns) overlapping the next tile");
}

void CudaEmitter::emit_tma_store(const Copy* c) {
  const Buffer& g = *c->dst.buffer;
  const Buffer& f = *c->src.buffer;
  const auto& L = frag(&f);
  const int64_t eb = g.dtype.bytes(), pc = passes::kPanelBytes / eb, V = 16 / eb;
  const size_t n = g.rank();
  int64_t vec = 1;
  if (!L.regs[1].empty() && L.regs[1][0].stride == 1)
    vec = L.regs[1][0].size;
  while (vec > 1 && (vec * eb > 16 || V % vec != 0))
    vec /= 2;
  const std::string st = storage_type_name(g.dtype);
  const std::string PC = std::to_string(pc), VS = std::to_string(V);
  open("");
  line("// epilogue: registers -> swizzled staging tile -> TMA store; the store drains while the");
  line("// next tile's main loop runs");
  line(st + "* tg_stage = (" + st + "*)(tg_smem + " + std::to_string(store_offset_) + ");");
  line("if (tg_tid == 0) " + need("tg_bulk_wait_read") + "<0>(); // the last tile's store has read it");
  line(need("tg_bar_consumers") + "(tg_grp);");
  declare_thread_coords(L);
  const int64_t R0 = L.regs_of_dim(0), R1 = L.regs_of_dim(1);
  line("#pragma unroll");
  open("for (int tg_r0 = 0; tg_r0 < " + std::to_string(R0) + "; ++tg_r0)");
  line("#pragma unroll");
  open("for (int tg_g = 0; tg_g < " + std::to_string(R1 / vec) + "; ++tg_g)");
  line("const int tg_r1 = tg_g * " + std::to_string(vec) + ";");
  line("const int tg_row = tg_t0 + " + reg_coord(L, 0, "tg_r0") + ", tg_col = tg_t1 + " +
       reg_coord(L, 1, "tg_r1") + ";");
  line("const int tg_c = tg_col % " + PC + ";");
  line("const int tg_at = tg_col / " + PC + " * " + std::to_string(store_rows_ * pc) + " + tg_row * " +
       PC + " + ((tg_c / " + VS + ") ^ (tg_row % 8)) * " + VS + " + tg_c % " + VS + ";");
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
  line(need("tg_fence_proxy_async") + "();");
  line("tg_bar_consumers(tg_grp);");
  open("if (tg_tid == 0)");
  for (int64_t p = 0; p < store_cols_ / pc; ++p) {
    std::string coords;
    for (size_t d = n; d-- > 0;) {
      std::string o = expr(c->dst.offsets[d]);
      if (d == n - 1 && p > 0)
        o = "(" + o + ") + " + std::to_string(p * pc);
      coords += ", (int)(" + o + ")";
    }
    line(need("tg_tma_store_" + std::to_string(n) + "d") + "(&tg_p.tg_tm_store, tg_stage + " +
         std::to_string(p * store_rows_ * pc) + coords + ");");
  }
  line(need("tg_bulk_commit") + "();");
  close();
  close();
}

std::string CudaEmitter::tma_store_helpers_source() const {
  std::ostringstream os;
  auto has = [&](const std::string& h) { return helpers_.count(h) > 0; };
  for (int n = 2; n <= 5; ++n) {
    std::string h = "tg_tma_store_" + std::to_string(n) + "d";
    if (!has(h))
      continue;
    std::string params, regs, ops;
    for (int i = 0; i < n; ++i) {
      params += ", int c" + std::to_string(i);
      regs += std::string(i ? ", " : "") + "%" + std::to_string(2 + i);
      ops += ", \"r\"(c" + std::to_string(i) + ")";
    }
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

// Host code: the store's tensor map (dims innermost first, byte strides of the outer dims, one
// 128-byte panel by the tile's rows as the box).
std::string CudaEmitter::tma_store_setup_source() {
  if (!tma_store_)
    return "";
  const Buffer& g = *tma_store_->dst.buffer;
  const size_t n = g.rank();
  const int64_t pc = passes::kPanelBytes / g.dtype.bytes();
  std::string dims, strides, box, ones, stride = std::to_string(g.dtype.bytes());
  for (size_t i = 0; i < n; ++i) {
    std::string d = "(cuuint64_t)(" + expr(g.shape[n - 1 - i]) + ")";
    dims += (i ? ", " : "") + d;
    if (i > 0)
      strides += std::string(i > 1 ? ", " : "") + stride;
    stride = stride + " * " + d;
    box += std::string(i ? ", " : "") + (i == 0 ? std::to_string(pc) : i == 1 ? std::to_string(store_rows_) : "1");
    ones += std::string(i ? ", " : "") + "1";
  }
  const char* dt = g.dtype == DType::bf16() ? "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16" : "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
  std::ostringstream os;
  os << "    { /* the epilogue's TMA store into " << g.name << " */\n"
     << "      const cuuint64_t dims[" << n << "] = {" << dims << "};\n"
     << "      const cuuint64_t strides[" << n - 1 << "] = {" << strides << "};\n"
     << "      const cuuint32_t box[" << n << "] = {" << box << "}, estr[" << n << "] = {" << ones << "};\n"
     << "      bool tg_empty = false;\n"
     << "      for (int i = 0; i < " << n << "; ++i)\n        tg_empty = tg_empty || dims[i] == 0;\n"
     << "      tg_ok = tg_ok && !tg_empty &&\n"
     << "              tg_encode(&tg_p->tg_tm_store, " << dt << ", " << n << ", (void*)tg_p->" << name(g.name)
     << ", dims, strides, box, estr,\n"
     << "                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,\n"
     << "                        CU_TENSOR_MAP_L2_PROMOTION_NONE,\n"
     << "                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;\n"
     << "    }\n";
  return os.str();
}

} // namespace tilegen::emit
