// The layout pictures of tilegen explain: gemm fragments (who holds which element) and shared
// buffers (where each 16-byte chunk lands, which banks the accesses hit). Every layout is the
// one LayoutInference planned (ExplainInput::plan); only the drawing happens here.
#include "explain/Explain.h"
#include "explain/ExplainWalk.h"
#include "explain/Svg.h"

#include "ir/Simplify.h"
#include "layout/Layout.h"
#include "support/TextEscape.h"

#include <algorithm>
#include <map>
#include <set>

namespace tilegen::explain {

using layout::FragmentLayout;

namespace {

std::string s(int64_t v) { return std::to_string(v); }

// The plan's entry of buffer `b`: by identity, else by name (a pass that rebuilt the buffer
// keeps its name; on-chip names are unique in a kernel).
template <class Map> auto find_buffer(const Map& m, const ir::Buffer* b) {
  auto it = m.find(b);
  if (it != m.end())
    return it;
  for (it = m.begin(); it != m.end(); ++it)
    if (it->first->name == b->name)
      return it;
  return m.end();
}

int64_t dim_of(const ir::Buffer& b, size_t d) {
  auto v = ir::as_const_int(b.shape[d]);
  return v ? *v : 0;
}

std::string shape_str(const ir::Buffer& b) {
  std::string out;
  for (size_t d = 0; d < b.rank(); ++d)
    out += (d ? " x " : "") + s(dim_of(b, d));
  return "[" + out + " " + b.dtype.name() + "]";
}

// ---- fragments --------------------------------------------------------------------------------

struct Owner {
  int64_t thread = -1, reg = -1, holders = 0;
};

// Who holds each element of a rank-1 or rank-2 fragment: the lowest thread (and its register)
// of those the layout gives it, and how many threads hold it (replication).
std::vector<Owner> owners(const FragmentLayout& L, int64_t rows, int64_t cols) {
  std::vector<Owner> out(static_cast<size_t>(rows * cols));
  bool two = L.rank() == 2;
  int64_t R0 = L.regs_of_dim(0), R1 = two ? L.regs_of_dim(1) : 1;
  for (int64_t t = 0; t < L.threads(); ++t)
    for (int64_t r0 = 0; r0 < R0; ++r0)
      for (int64_t r1 = 0; r1 < R1; ++r1) {
        int64_t c0 = L.thread_coord(0, t) + L.reg_coord(0, r0);
        int64_t c1 = two ? L.thread_coord(1, t) + L.reg_coord(1, r1) : 0;
        int64_t row = two ? c0 : 0, col = two ? c1 : c0;
        if (row < 0 || row >= rows || col < 0 || col >= cols)
          continue;
        Owner& o = out[static_cast<size_t>(row * cols + col)];
        if (o.holders++ == 0) {
          o.thread = t;
          o.reg = r0 * R1 + r1;
        }
      }
  return out;
}

// Lane hue, warp lightness: neighbours in a warp differ in hue, warps in shade.
std::string thread_color(int64_t t, int64_t warp_size) {
  static const int kLight[] = {82, 70, 60, 88};
  return svg::hue_color(t % warp_size, warp_size, kLight[(t / warp_size) % 4]);
}

Picture fragment_picture(const std::string& name, const FragmentLayout& L, int64_t warp_size,
                         const std::string& warp_word) {
  int64_t rows = L.rank() == 2 ? L.shape[0] : 1, cols = L.shape.back();
  std::vector<Owner> own = owners(L, rows, cols);
  int cell = static_cast<int>(std::clamp<int64_t>(960 / std::max<int64_t>(cols, 1), 4, 30));
  bool labels = cell >= 28;
  const int left = 36, top = 20;
  Picture p;
  p.width = left + static_cast<int>(cols) * cell + 10;
  p.height = top + static_cast<int>(rows) * cell + 10;
  int64_t missing = 0, replicated = 1;
  std::string& o = p.svg;
  for (int64_t c = 0; c < cols; c += 8)
    o += svg::text(left + static_cast<int>(c) * cell + cell / 2, top - 6, s(c), 9) + "\n";
  for (int64_t r = 0; r < rows; r += 8)
    o += svg::text(left - 14, top + static_cast<int>(r) * cell + cell / 2 + 3, s(r), 9) + "\n";
  o += "<g stroke=\"#fff\" stroke-width=\"0.5\">\n";
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const Owner& w = own[static_cast<size_t>(r * cols + c)];
      int x = left + static_cast<int>(c) * cell, y = top + static_cast<int>(r) * cell;
      if (w.holders == 0) {
        ++missing;
        o += svg::rect(x, y, cell, cell, "#ffffff", "class=\"cell empty\" stroke=\"#999\"") + "\n";
        continue;
      }
      replicated = std::max(replicated, w.holders);
      std::string title = name + "[" + (rows > 1 ? s(r) + "," : "") + s(c) + "]: thread " +
                          s(w.thread) + " (" + warp_word + " " + s(w.thread / warp_size) +
                          ", lane " + s(w.thread % warp_size) + "), register " + s(w.reg) +
                          (w.holders > 1 ? ", held by " + s(w.holders) + " threads" : "");
      o += "<rect class=\"cell\" x=\"" + s(x) + "\" y=\"" + s(y) + "\" width=\"" + s(cell) +
           "\" height=\"" + s(cell) + "\" fill=\"" + thread_color(w.thread, warp_size) +
           "\" data-e=\"" + s(r) + "," + s(c) +
           "\" data-t=\"" + s(w.thread) + "\" data-r=\"" + s(w.reg) + "\"><title>" +
           xml_text(title) + "</title></rect>\n";
      if (labels) {
        o += svg::text(x + cell / 2, y + cell / 2 - 2, "T" + s(w.thread), 8) +
             svg::text(x + cell / 2, y + cell / 2 + 8, "V" + s(w.reg), 8) + "\n";
      }
    }
  o += "</g>\n";
  // Warp boundaries: a thick outline around each warp's region where it is one rectangle is
  // what a reader looks for; approximate it with lines where the owning warp changes.
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const Owner& w = own[static_cast<size_t>(r * cols + c)];
      if (w.holders == 0)
        continue;
      int x = left + static_cast<int>(c) * cell, y = top + static_cast<int>(r) * cell;
      int64_t warp = w.thread / warp_size;
      if (c + 1 < cols) {
        const Owner& n = own[static_cast<size_t>(r * cols + c + 1)];
        if (n.holders && n.thread / warp_size != warp)
          o += svg::line(x + cell, y, x + cell, y + cell, "#000", "stroke-width=\"1.5\"") + "\n";
      }
      if (r + 1 < rows) {
        const Owner& n = own[static_cast<size_t>((r + 1) * cols + c)];
        if (n.holders && n.thread / warp_size != warp)
          o += svg::line(x, y + cell, x + cell, y + cell, "#000", "stroke-width=\"1.5\"") + "\n";
      }
    }
  p.attrs = "class=\"fragment\" data-buffer=\"" + xml_text(name) + "\" data-rows=\"" + s(rows) +
            "\" data-cols=\"" + s(cols) + "\" data-threads=\"" + s(L.threads()) +
            "\" data-regs=\"" + s(L.num_regs()) + "\" data-replication=\"" + s(replicated) +
            "\" data-unowned=\"" + s(missing) + "\"";
  return p;
}

// The top-left corner of a fragment, labelled like CuTe's print_latex (T = thread, V = value,
// i.e. register), for grids too fine to carry labels.
Picture fragment_detail(const std::string& name, const FragmentLayout& L, int64_t warp_size) {
  int64_t rows = L.rank() == 2 ? L.shape[0] : 1, cols = L.shape.back();
  std::vector<Owner> own = owners(L, rows, cols);
  int64_t dr = std::min<int64_t>(rows, 16), dc = std::min<int64_t>(cols, 16);
  const int cell = 34, left = 30, top = 18;
  Picture p;
  p.width = left + static_cast<int>(dc) * cell + 10;
  p.height = top + static_cast<int>(dr) * cell + 10;
  for (int64_t c = 0; c < dc; ++c)
    p.svg += svg::text(left + static_cast<int>(c) * cell + cell / 2, top - 5, s(c), 9);
  for (int64_t r = 0; r < dr; ++r)
    p.svg += svg::text(left - 12, top + static_cast<int>(r) * cell + cell / 2 + 3, s(r), 9);
  p.svg += "\n";
  for (int64_t r = 0; r < dr; ++r)
    for (int64_t c = 0; c < dc; ++c) {
      const Owner& w = own[static_cast<size_t>(r * cols + c)];
      int x = left + static_cast<int>(c) * cell, y = top + static_cast<int>(r) * cell;
      std::string fill = w.holders ? thread_color(w.thread, warp_size) : "#ffffff";
      p.svg += svg::rect(x, y, cell, cell, fill, "class=\"dcell\" stroke=\"#fff\"");
      if (w.holders)
        p.svg += svg::text(x + cell / 2, y + 14, "T" + s(w.thread), 9) +
                 svg::text(x + cell / 2, y + 26, "V" + s(w.reg), 9);
      p.svg += "\n";
    }
  p.attrs = "class=\"fragment-detail\" data-buffer=\"" + xml_text(name) + "\"";
  return p;
}

const char* operand_reader(const passes::GemmPlan& g) {
  switch (g.kind) {
  case passes::GemmPlan::Mma: return "ldmatrix into the mma.sync operand registers";
  case passes::GemmPlan::Wgmma: return "the wgmma shared-memory matrix descriptors";
  case passes::GemmPlan::Simdgroup: return "simdgroup_load into 8x8 simdgroup matrices";
  case passes::GemmPlan::MatrixCore: return "per-lane loads into the MFMA/WMMA operand registers";
  case passes::GemmPlan::Simt: return "each thread's FMA loop (scalar shared loads)";
  }
  return "";
}

std::string gemm_kind(const passes::GemmPlan& g, const Target& t) {
  std::string w = t.backend == Backend::Metal ? "SIMD-groups" : t.backend == Backend::HIP ? "waves" : "warps";
  switch (g.kind) {
  case passes::GemmPlan::Mma:
    return "mma.sync m16n8k16, " + s(g.wm) + " x " + s(g.wn) + " warps (M x N)" +
           (g.a_in_regs ? ", A from registers" : "") + (g.b_chunked ? ", B in n16 chunks" : "");
  case passes::GemmPlan::Wgmma:
    return "wgmma m64nNk16, " + s(g.wg) + " warpgroup(s) along M" +
           (g.a_hoisted ? ", A hoisted into registers before the loop" : "") +
           (g.promote_n ? ", FP8 partial sums promoted every " + s(g.promote_n) + " columns" : "");
  case passes::GemmPlan::Simdgroup:
    return "simdgroup_multiply_accumulate 8x8, " + s(g.wm) + " x " + s(g.wn) + " " + w;
  case passes::GemmPlan::MatrixCore: {
    std::string inst = "matrix instruction";
    if (g.matrix >= 0 && static_cast<size_t>(g.matrix) < t.hip.matrix.size())
      inst = t.hip.matrix[static_cast<size_t>(g.matrix)].mnemonic;
    return inst + ", " + s(g.wm) + " x " + s(g.wn) + " " + w +
           (g.steps > 1 ? ", " + s(g.steps) + " k steps per operand load" : "");
  }
  case passes::GemmPlan::Simt:
    return "FMA tiles, " + s(g.ty) + " x " + s(g.tx) + " threads" +
           (g.a_staged ? ", A staged through shared memory" : "");
  }
  return "";
}

} // namespace

std::vector<Section> layout_sections(const ExplainInput& in) {
  std::vector<Section> out;
  const Target& t = *in.target;
  Walk w = walk(in.kernel->body);
  if (!in.plan) {
    Section sec;
    sec.id = "fragments";
    sec.title = "Fragment layouts";
    sec.lines.push_back("Target " + t.name + " (" + backend_name(t.backend) + " backend" +
                        ") has no thread layouts from layout inference, so there is no picture "
                        "of who holds which element.");
    if (t.backend == Backend::WGSL)
      sec.lines.push_back("The WGSL emitter spreads a register fragment [R, C] over a TY x TX "
                          "grid of invocations ((ty, tx) owns rows ty + TY a and columns tx + "
                          "TX b) chosen per kernel; gemm operands live in workgroup memory "
                          "(docs/wgsl.md).");
    else
      sec.lines.push_back("A C variant runs a block as one thread: a fragment is an array that "
                          "thread loops over (docs/c-backend.md).");
    out.push_back(std::move(sec));
    return out;
  }
  if (w.gemms.empty()) {
    Section sec;
    sec.id = "fragments";
    sec.title = "Fragment layouts";
    sec.lines.push_back("This kernel has no gemm: no operand or accumulator layouts to draw.");
    out.push_back(std::move(sec));
    return out;
  }
  int64_t ws = t.gpu.warp_size > 0 ? t.gpu.warp_size : 32;
  std::string warp_word = t.backend == Backend::Metal ? "SIMD-group"
                          : t.backend == Backend::HIP ? "wave"
                                                      : "warp";
  int index = 0;
  for (const ir::Gemm* g : w.gemms) {
    ++index;
    Section sec;
    sec.id = "gemm" + s(index);
    sec.title = "Gemm " + s(index) + ": " + g->c->name + " += " + g->a->name +
                (g->transpose_a ? "^T" : "") + " @ " + g->b->name + (g->transpose_b ? "^T" : "");
    sec.lines.push_back("At " + g->loc.str() + ".");
    auto gp = in.plan->gemms.find(g);
    if (gp != in.plan->gemms.end())
      sec.lines.push_back("Instruction: " + gemm_kind(gp->second, t) + ".");
    for (const auto& [role, buf] : {std::pair<const char*, const ir::BufferPtr&>{"A", g->a},
                                    {"B", g->b},
                                    {"accumulator", g->c}}) {
      auto f = find_buffer(in.plan->fragments, buf.get());
      if (f != in.plan->fragments.end()) {
        const FragmentLayout& L = f->second;
        sec.lines.push_back(std::string(role) + " " + buf->name + " " + shape_str(*buf) +
                            ": registers, " + s(L.threads()) + " threads x " +
                            s(L.num_regs()) + " registers, replication " +
                            s(L.replication()) + "; " + L.str() +
                            (L.origin.empty() ? "" : " (" + L.origin + ")"));
        Picture p = fragment_picture(buf->name, L, ws, warp_word);
        p.attrs += " data-role=\"" + std::string(role) + "\"";
        sec.pictures.push_back(std::move(p));
        if (L.shape.back() > 16 || (L.rank() == 2 && L.shape[0] > 16) ||
            sec.pictures.back().width < 400)
          sec.pictures.push_back(fragment_detail(buf->name, L, ws));
      } else if (buf->scope == ir::MemScope::Shared) {
        std::string reader = gp != in.plan->gemms.end() ? operand_reader(gp->second) : "loads";
        sec.lines.push_back(std::string(role) + " " + buf->name + " " + shape_str(*buf) +
                            ": shared memory, read through " + reader +
                            " (its swizzle and bank map are pictured under Shared buffers).");
      } else {
        sec.lines.push_back(std::string(role) + " " + buf->name + " " + shape_str(*buf) +
                            ": no layout in the plan.");
      }
    }
    sec.lines.push_back("Each cell is one element; its color is the thread holding it (hue: " +
                        warp_word + " lane, shade: " + warp_word +
                        "); black lines separate " + warp_word +
                        "s. Hover a cell for thread, lane and register. The labelled grid is "
                        "the top-left corner: T = thread, V = register (value) index.");
    out.push_back(std::move(sec));
  }
  return out;
}

// ---- shared buffers ---------------------------------------------------------------------------

namespace {

struct SharedMap {
  int64_t rows = 0, cols = 0, eb = 1;
  std::string how;                // "Swizzle<3,3,3>", "128-byte panels ..."
  layout::Swizzle swizzle;        // of the row-major buffer or of one panel
  int64_t panel = 0;              // elements per panel row (0: not panelled)
  int64_t byte(int64_t r, int64_t c) const {
    if (panel > 0)
      return ((c / panel) * rows * panel + swizzle.apply(r * panel + c % panel)) * eb;
    return swizzle.apply(r * cols + c) * eb;
  }
};

// Wavefronts of each phase, with the (row, unit) cells the phase touches.
struct Phase {
  std::vector<std::pair<int64_t, int64_t>> cells;
  int wavefronts = 1;
};

} // namespace

std::vector<Section> swizzle_sections(const ExplainInput& in) {
  std::vector<Section> out;
  const Target& t = *in.target;
  Walk w = walk(in.kernel->body);
  Section head;
  head.id = "shared";
  head.title = "Shared buffers";
  if (w.shared.empty()) {
    head.lines.push_back("This kernel declares no shared buffer.");
    out.push_back(std::move(head));
    return out;
  }
  int banks = t.gpu.smem_banks > 0 ? t.gpu.smem_banks : 32;
  head.lines.push_back(
      "Each cell is a 16-byte chunk (4 banks of 4 bytes) of a row, at its logical place; the "
      "label is the chunk's physical place in its row after the swizzle and its first bank; the "
      "color is its bank group. Bank model: " + s(banks) +
      " banks of 4 bytes, one 4-byte word per bank per wavefront, a 16-byte access served 8 "
      "threads per wavefront (layout::wavefronts). A red outline marks the chunks of an access "
      "phase that needs more than one wavefront (a bank conflict).");
  if (!in.plan)
    head.lines.push_back("Target " + t.name + " plans no swizzles (no thread layouts): buffers "
                         "are row-major.");
  else if (t.backend != Backend::CUDA)
    head.lines.push_back("On " + std::string(backend_name(t.backend)) +
                         " the bank model is CUDA's 32 x 4-byte banks; the buffers are row-major "
                         "(this target's plan has no swizzles).");
  out.push_back(std::move(head));

  for (const ir::Buffer* b : w.shared) {
    Section sec;
    sec.id = "shared-" + b->name;
    sec.title = "Shared buffer " + b->name + " " + shape_str(*b);
    SharedMap m;
    m.eb = b->dtype.bytes();
    m.cols = b->rank() ? dim_of(*b, b->rank() - 1) : 1;
    m.rows = 1;
    for (size_t d = 0; d + 1 < b->rank(); ++d)
      m.rows *= dim_of(*b, d);
    m.how = "row-major, no swizzle";
    if (in.plan) {
      auto pn = find_buffer(in.plan->panels, b);
      auto pm = find_buffer(in.plan->panel_swizzles, b);
      auto sw = find_buffer(in.plan->swizzles, b);
      if (pn != in.plan->panels.end() && pm != in.plan->panel_swizzles.end() && pm->second) {
        m.panel = pn->second;
        m.swizzle = passes::panel_element_swizzle(*pm->second, static_cast<int>(m.eb));
        m.how = "column panels of " + s(m.panel) + " elements (" + s(pm->second->bytes) +
                "-byte rows, " + pm->second->tma + "), each swizzled " + m.swizzle.str();
      } else if (sw != in.plan->swizzles.end() && sw->second.B != 0) {
        m.swizzle = sw->second;
        m.how = "row-major, " + m.swizzle.str() +
                " (offset o -> o ^ (((o >> (M + S)) & (2^B - 1)) << M), in elements)";
      }
    }
    sec.lines.push_back("Layout: " + m.how + ".");
    int64_t row_bytes = m.cols * m.eb;
    if (row_bytes % 16 != 0 || m.eb > 16) {
      sec.lines.push_back("Rows of " + s(row_bytes) +
                          " bytes are not whole 16-byte chunks: no chunk picture.");
      out.push_back(std::move(sec));
      continue;
    }
    int64_t per = 16 / m.eb, units = m.cols / per;
    auto bank = [&](int64_t r, int64_t u) { return (m.byte(r, u * per) / 4) % banks; };

    // The accesses, over the whole buffer.
    std::vector<std::pair<std::string, std::vector<Phase>>> accesses;
    const passes::GemmPlan* reader = nullptr;
    if (in.plan)
      for (const ir::Gemm* g : w.gemms)
        if (g->a->name == b->name || g->b->name == b->name)
          if (auto gp = in.plan->gemms.find(g); gp != in.plan->gemms.end() && !reader)
            reader = &gp->second;
    if (reader && (reader->kind == passes::GemmPlan::Mma ||
                   reader->kind == passes::GemmPlan::Wgmma)) {
      std::vector<Phase> ph;
      for (int64_t r0 = 0; r0 + 8 <= m.rows; r0 += 8)
        for (int64_t u = 0; u < units; ++u) {
          Phase p;
          std::vector<int64_t> addr;
          for (int64_t r = r0; r < r0 + 8; ++r) {
            addr.push_back(m.byte(r, u * per));
            p.cells.push_back({r, u});
          }
          p.wavefronts = layout::wavefronts(addr, 16);
          ph.push_back(std::move(p));
        }
      accesses.push_back({reader->kind == passes::GemmPlan::Mma
                              ? "ldmatrix reads (8 rows x 16 bytes per 8x8 matrix)"
                              : "wgmma core-matrix reads (8 rows x 16 bytes)",
                          std::move(ph)});
    } else if (reader) {
      sec.lines.push_back(std::string("Read by ") + operand_reader(*reader) +
                          ": that access pattern is not modelled here.");
    }
    bool by_tma = false;
    if (in.plan)
      for (const auto& [loop, tp] : in.plan->tma_loops) {
        for (const ir::StmtNode* pr : tp.producers)
          if (const auto* c = pr->as<ir::Copy>(); c && c->dst.buffer->name == b->name)
            by_tma = true;
        for (const ir::StmtNode* pr : tp.prologue)
          if (const auto* c = pr->as<ir::Copy>(); c && c->dst.buffer->name == b->name)
            by_tma = true;
      }
    if (by_tma) {
      sec.lines.push_back("Filled by TMA boxes (cp.async.bulk.tensor): the tensor map writes "
                          "the swizzled panels, no thread stores.");
    } else if (w.filled_from_global.count(b->name)) {
      std::vector<Phase> ph;
      int64_t total = m.rows * units;
      for (int64_t q0 = 0; q0 < total; q0 += 8) {
        Phase p;
        std::vector<int64_t> addr;
        for (int64_t q = q0; q < std::min(total, q0 + 8); ++q) {
          addr.push_back(m.byte(q / units, (q % units) * per));
          p.cells.push_back({q / units, q % units});
        }
        p.wavefronts = layout::wavefronts(addr, 16);
        ph.push_back(std::move(p));
      }
      accesses.push_back({std::string(t.gpu.async_copy == AsyncCopy::CpAsync ? "cp.async" : "copy") +
                              " stores from global (thread q -> chunk q, 16 bytes each)",
                          std::move(ph)});
    }

    // The picture: up to 16 rows (32 for rows shorter than 128 bytes: the pattern's period in
    // rows is longer) and 32 chunks.
    int64_t show_rows = std::min<int64_t>(m.rows, row_bytes < 128 ? 32 : 16);
    int64_t show_units = std::min<int64_t>(units, 32);
    std::set<std::pair<int64_t, int64_t>> conflict_cells;
    std::string attrs;
    for (size_t a = 0; a < accesses.size(); ++a) {
      const auto& [what, ph] = accesses[a];
      int64_t bad = 0, worst = 1;
      for (const Phase& p : ph) {
        worst = std::max<int64_t>(worst, p.wavefronts);
        if (p.wavefronts > 1) {
          ++bad;
          for (const auto& c : p.cells)
            conflict_cells.insert(c);
        }
      }
      sec.lines.push_back(what + ": " + s(bad) + " of " + s(static_cast<int64_t>(ph.size())) +
                          " phases conflict (worst " + s(worst) + " wavefront" +
                          (worst > 1 ? "s" : "") + " per phase)" +
                          (bad == 0 ? ", conflict-free." : "."));
      std::string key = a == 0 && reader && (reader->kind == passes::GemmPlan::Mma ||
                                             reader->kind == passes::GemmPlan::Wgmma)
                            ? "read"
                            : "store";
      attrs += " data-" + key + "-phases=\"" + s(static_cast<int64_t>(ph.size())) + "\" data-" +
               key + "-conflicts=\"" + s(bad) + "\"";
    }
    if (accesses.empty())
      sec.lines.push_back("No access of this buffer is modelled: no conflict count.");
    if (show_rows < m.rows || show_units < units)
      sec.lines.push_back("Shown: rows 0-" + s(show_rows - 1) + " of " + s(m.rows) +
                          ", chunks 0-" + s(show_units - 1) + " of " + s(units) +
                          " (the conflict counts above cover the whole buffer).");

    const int cell = 44, left = 40, top = 22;
    Picture p;
    p.width = left + static_cast<int>(show_units) * cell + 10;
    p.height = top + static_cast<int>(show_rows) * cell / 2 + 10;
    int ch = cell / 2;
    for (int64_t u = 0; u < show_units; ++u)
      p.svg += svg::text(left + static_cast<int>(u) * cell + cell / 2, top - 6, "c" + s(u), 9);
    p.svg += "\n";
    int64_t cells_in_row = row_bytes / 16;
    for (int64_t r = 0; r < show_rows; ++r) {
      p.svg += svg::text(left - 16, top + static_cast<int>(r) * ch + ch / 2 + 3, "r" + s(r), 9);
      for (int64_t u = 0; u < show_units; ++u) {
        int x = left + static_cast<int>(u) * cell, y = top + static_cast<int>(r) * ch;
        int64_t bk = bank(r, u);
        int64_t phys = (m.byte(r, u * per) / 16) % std::max<int64_t>(cells_in_row, 1);
        bool bad = conflict_cells.count({r, u}) > 0;
        std::string extra = std::string("class=\"chunk") + (bad ? " conflict" : "") +
                            "\" data-bank=\"" + s(bk) + "\" stroke=\"" +
                            (bad ? "#d00000" : "#ffffff") + "\" stroke-width=\"" +
                            (bad ? "2" : "1") + "\"";
        p.svg += svg::rect(x, y, cell, ch, svg::hue_color(bk / 4, banks / 4, 78), extra);
        p.svg += svg::text(x + cell / 2, y + ch / 2 + 4, "p" + s(phys) + " b" + s(bk), 9);
        p.svg += "\n";
      }
    }
    p.attrs = "class=\"swizzle\" data-buffer=\"" + xml_text(b->name) + "\" data-swizzle=\"" +
              xml_text(m.panel ? "panel " + m.swizzle.str() : m.swizzle.str()) + "\"" + attrs;
    sec.pictures.push_back(std::move(p));
    out.push_back(std::move(sec));
  }
  return out;
}

} // namespace tilegen::explain
