#include "layout/Layout.h"

#include "support/InternalError.h"

#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace tilegen::layout {

int64_t FragmentLayout::threads() const {
  int64_t n = 1;
  for (const auto& m : thread_modes)
    n *= m.size;
  return n;
}

int64_t FragmentLayout::regs_of_dim(size_t d) const {
  int64_t n = 1;
  for (const auto& m : regs[d])
    n *= m.size;
  return n;
}

int64_t FragmentLayout::num_regs() const {
  int64_t n = 1;
  for (size_t d = 0; d < rank(); ++d)
    n *= regs_of_dim(d);
  return n;
}

int64_t FragmentLayout::replication() const {
  int64_t n = 1;
  for (const auto& m : thread_modes) {
    bool moves = false;
    for (int64_t s : m.stride)
      moves = moves || s != 0;
    if (!moves)
      n *= m.size;
  }
  return n;
}

int64_t FragmentLayout::reg_coord(size_t d, int64_t r) const {
  int64_t c = 0;
  for (const auto& m : regs[d]) {
    c += (r % m.size) * m.stride;
    r /= m.size;
  }
  return c;
}

int64_t FragmentLayout::thread_coord(size_t d, int64_t tid) const {
  int64_t c = 0;
  for (const auto& m : thread_modes) {
    c += (tid % m.size) * m.stride[d];
    tid /= m.size;
  }
  return c;
}

FragmentLayout::DimMap FragmentLayout::dim_map(size_t d) const {
  DimMap m;
  for (const auto& t : thread_modes) {
    m.thread_sizes.push_back(t.size);
    m.thread_strides.push_back(t.stride[d]);
  }
  m.regs = regs[d];
  return m;
}

FragmentLayout FragmentLayout::from_dim_maps(const std::vector<DimMap>& maps,
                                             const std::vector<std::string>& names,
                                             std::vector<int64_t> shape, std::string origin) {
  FragmentLayout l;
  l.shape = std::move(shape);
  l.origin = std::move(origin);
  TG_ASSERT(!maps.empty() && maps.size() == l.shape.size(), "from_dim_maps: rank mismatch");
  for (size_t k = 0; k < maps[0].thread_sizes.size(); ++k) {
    ThreadMode t;
    t.size = maps[0].thread_sizes[k];
    t.name = k < names.size() ? names[k] : "t" + std::to_string(k);
    for (const auto& m : maps) {
      TG_ASSERT(m.thread_sizes == maps[0].thread_sizes, "from_dim_maps: thread decompositions differ");
      t.stride.push_back(m.thread_strides[k]);
    }
    l.thread_modes.push_back(t);
  }
  for (const auto& m : maps)
    l.regs.push_back(m.regs);
  return l;
}

FragmentLayout FragmentLayout::drop_dim(size_t d) const {
  TG_ASSERT(d < rank(), "drop_dim: no such dim");
  FragmentLayout l;
  for (size_t i = 0; i < rank(); ++i)
    if (i != d) {
      l.shape.push_back(shape[i]);
      l.regs.push_back(regs[i]);
    }
  for (const auto& t : thread_modes) {
    ThreadMode m = t;
    m.stride.erase(m.stride.begin() + static_cast<long>(d));
    l.thread_modes.push_back(m);
  }
  l.origin = origin + ", reduced over dim " + std::to_string(d);
  return l;
}

std::string FragmentLayout::str() const {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << "] threads ";
  for (const auto& t : thread_modes) {
    os << "(" << t.size << ":<";
    for (size_t i = 0; i < t.stride.size(); ++i)
      os << (i ? "," : "") << t.stride[i];
    os << "> " << t.name << ")";
  }
  os << " regs ";
  for (size_t d = 0; d < regs.size(); ++d) {
    os << (d ? " x " : "") << "<";
    for (const auto& r : regs[d])
      os << "(" << r.size << ":" << r.stride << ")";
    os << ">";
  }
  return os.str();
}

// ---- factories -------------------------------------------------------------------------------

FragmentLayout mma_m16n8k16_accumulator(int64_t M, int64_t N, int64_t WM, int64_t WN) {
  TG_ASSERT(M % (16 * WM) == 0 && N % (8 * WN) == 0, "mma accumulator: tile not divisible");
  int64_t wtm = M / WM, wtn = N / WN;
  FragmentLayout l;
  l.shape = {M, N};
  l.thread_modes = {{4, {0, 2}, "lane%4"}, {8, {1, 0}, "lane/4"}, {WM, {wtm, 0}, "warp_m"},
                    {WN, {0, wtn}, "warp_n"}};
  l.regs = {{{2, 8}, {wtm / 16, 16}}, {{2, 1}, {wtn / 8, 8}}};
  l.origin = "mma.sync m16n8k16 accumulator, " + std::to_string(WM) + "x" + std::to_string(WN) +
             " warps of " + std::to_string(wtm) + "x" + std::to_string(wtn);
  return l;
}

FragmentLayout simdgroup_matrix_8x8() {
  FragmentLayout l;
  l.shape = {8, 8};
  // Lane bits, lowest first: bit 0 moves 2 columns, bits 1-2 one row each, bit 3 four
  // columns, bit 4 four rows.
  l.thread_modes = {{2, {0, 2}, "lane&1"}, {4, {1, 0}, "lane>>1&3"}, {2, {0, 4}, "lane>>3&1"},
                    {2, {4, 0}, "lane>>4"}};
  l.regs = {{}, {{2, 1}}};
  l.origin = "simdgroup_matrix 8x8";
  return l;
}

FragmentLayout simdgroup_accumulator(int64_t M, int64_t N, int64_t WM, int64_t WN) {
  TG_ASSERT(M % (8 * WM) == 0 && N % (8 * WN) == 0, "simdgroup accumulator: tile not divisible");
  const int64_t wtm = M / WM, wtn = N / WN;
  FragmentLayout l = simdgroup_matrix_8x8();
  l.shape = {M, N};
  l.thread_modes.push_back({WM, {wtm, 0}, "simd_m"});
  l.thread_modes.push_back({WN, {0, wtn}, "simd_n"});
  l.regs = {{{wtm / 8, 8}}, {{2, 1}, {wtn / 8, 8}}};
  l.origin = "simdgroup_matrix 8x8 accumulator, " + std::to_string(WM) + "x" +
             std::to_string(WN) + " SIMD-groups of " + std::to_string(wtm) + "x" +
             std::to_string(wtn);
  return l;
}

FragmentLayout simt_accumulator(int64_t M, int64_t N, int64_t TY, int64_t TX) {
  TG_ASSERT(M % TY == 0 && N % (4 * TX) == 0, "simt accumulator: tile not divisible");
  FragmentLayout l;
  l.shape = {M, N};
  l.thread_modes = {{TX, {0, 4}, "tx"}, {TY, {1, 0}, "ty"}};
  l.regs = {{{M / TY, TY}}, {{4, 1}, {N / (4 * TX), 4 * TX}}};
  l.origin = "FMA tile, " + std::to_string(TY) + "x" + std::to_string(TX) + " threads of " +
             std::to_string(M / TY) + "x" + std::to_string(N / TX);
  return l;
}

namespace {

int64_t largest_pow2_dividing(int64_t n, int64_t cap) {
  int64_t p = 1;
  while (p * 2 <= cap && n % (p * 2) == 0)
    p *= 2;
  return p;
}

int64_t largest_divisor_dividing(int64_t of, int64_t n) { // the largest d | of with d | n
  for (int64_t d = of; d > 1; --d)
    if (of % d == 0 && n % d == 0)
      return d;
  return 1;
}

// The shipped arrangements (the layouts every existing spec gets), or nullopt where their
// divisibility conditions fail.
std::optional<FragmentLayout> elementwise_regular(const std::vector<int64_t>& shape,
                                                  int64_t threads, int64_t vec, int64_t W) {
  const int64_t warps = threads / W;
  FragmentLayout l;
  l.shape = shape;
  if (shape.size() == 1) {
    int64_t n = shape[0];
    int64_t v = vec;
    while (v > 1 && n % (threads * v) != 0)
      v /= 2;
    if (n % threads == 0 && n >= threads) {
      l.thread_modes = {{threads, {v}, "tid"}};
      l.regs = {{{v, 1}, {n / (threads * v), threads * v}}};
    } else if (threads % n == 0) {
      // Fewer elements than threads: the first n threads own one each, the rest replicate.
      l.thread_modes = {{n, {1}, "tid%n"}, {threads / n, {0}, "tid/n"}};
      l.regs = {{}};
    } else {
      return std::nullopt;
    }
    l.origin = "elementwise, " + std::to_string(v) + " per thread and access";
    return l;
  }
  int64_t M = shape[0], N = shape[1];
  int64_t wr = 1; // warps along rows
  while (wr < warps && wr * 2 <= M && M % (wr * 2) == 0 && warps % (wr * 2) == 0)
    wr *= 2;
  int64_t wc = warps / wr; // warps along columns
  int64_t v = vec;
  while (v > 1 && N % (W * wc * v) != 0)
    v /= 2;
  if (N % (W * wc * v) != 0)
    return std::nullopt;
  l.thread_modes = {{W, {0, v}, "lane"}, {wc, {0, W * v}, "warp_n"}, {wr, {1, 0}, "warp_m"}};
  l.regs = {{{M / wr, wr}}, {{v, 1}, {N / (W * wc * v), W * wc * v}}};
  l.origin = "elementwise, " + std::to_string(v) + " consecutive elements per thread and access";
  return l;
}

} // namespace

namespace {

void check_elementwise_args(const std::vector<int64_t>& shape, int64_t threads, int64_t W) {
  TG_ASSERT(W > 0 && (W & (W - 1)) == 0, "elementwise: lanes per warp must be a power of two");
  TG_ASSERT(threads % W == 0 && threads > 0, "elementwise: threads must be a multiple of the warp");
  TG_ASSERT(!shape.empty() && shape.size() <= 4, "elementwise: rank 1 to 4");
  for (int64_t e : shape)
    TG_ASSERT(e > 0, "elementwise: empty extent");
}

FragmentLayout elementwise_general(const std::vector<int64_t>& shape, int64_t threads, int64_t vec,
                                   int64_t W);

} // namespace

FragmentLayout elementwise(const std::vector<int64_t>& shape, int64_t threads, int64_t vec,
                           int64_t lanes_per_warp) {
  const int64_t W = lanes_per_warp;
  check_elementwise_args(shape, threads, W);
  if (shape.size() <= 2)
    if (auto l = elementwise_regular(shape, threads, vec, W))
      return *l;
  return elementwise_general(shape, threads, vec, W);
}

FragmentLayout elementwise_runs(const std::vector<int64_t>& shape, int64_t threads, int64_t vec,
                                int64_t lanes_per_warp) {
  check_elementwise_args(shape, threads, lanes_per_warp);
  TG_ASSERT(vec > 0 && (vec & (vec - 1)) == 0 && shape.back() % vec == 0,
            "elementwise_runs: the run must be a power of two dividing the last extent");
  FragmentLayout l = elementwise_general(shape, threads, vec, lanes_per_warp);
  l.origin = "elementwise runs of " + std::to_string(vec) + " consecutive elements per thread "
             "(vectorized), " + std::to_string(l.replication()) + " thread(s) per element";
  return l;
}

namespace {

FragmentLayout elementwise_general(const std::vector<int64_t>& shape, int64_t threads, int64_t vec,
                                   int64_t W) {
  // Any other shape and block (fewer elements than threads, a warp count that is no power of
  // two, columns that do not divide among 32 lanes, rank 3 or 4): lanes take power-of-two parts
  // of the last dim (after `vec` consecutive elements), then of the dims before it; warps take
  // divisors of what is left, first dim first; threads that find nothing left replicate
  // (stride-0 modes: stores have one writer, reductions count each element once). Always a
  // layout, so that layout inference never fails on a shape.
  const size_t rank = shape.size(), last = rank - 1;
  const int64_t v = largest_pow2_dividing(shape[last], std::max<int64_t>(vec, 1));
  std::vector<int64_t> left = shape, lanes(rank, 1), warps(rank, 1), unit(rank, 1);
  left[last] /= v;
  unit[last] = v; // coordinate step of one lane or warp along the dim, before lanes
  int64_t lanes_left = W, warps_left = threads / W;
  for (size_t d = rank; d-- > 0;) {
    lanes[d] = largest_pow2_dividing(left[d], lanes_left);
    lanes_left /= lanes[d];
    left[d] /= lanes[d];
  }
  for (size_t d = 0; d < rank; ++d) {
    warps[d] = largest_divisor_dividing(warps_left, left[d]);
    warps_left /= warps[d];
    left[d] /= warps[d];
  }
  auto dim_name = [&](size_t d) {
    return d == last ? std::string("n") : d + 2 == rank ? std::string("m") : "d" + std::to_string(d);
  };
  auto along = [&](size_t d, int64_t step) {
    std::vector<int64_t> st(rank, 0);
    st[d] = step;
    return st;
  };
  FragmentLayout l;
  l.shape = shape;
  for (size_t d = rank; d-- > 0;)
    if (lanes[d] > 1)
      l.thread_modes.push_back({lanes[d], along(d, unit[d]), "lane_" + dim_name(d)});
  if (lanes_left > 1)
    l.thread_modes.push_back({lanes_left, std::vector<int64_t>(rank, 0), "lane_rep"});
  for (size_t d = rank; d-- > 0;)
    if (warps[d] > 1)
      l.thread_modes.push_back({warps[d], along(d, unit[d] * lanes[d]), "warp_" + dim_name(d)});
  if (warps_left > 1)
    l.thread_modes.push_back({warps_left, std::vector<int64_t>(rank, 0), "warp_rep"});
  l.regs.resize(rank);
  if (v > 1)
    l.regs[last].push_back({v, 1});
  for (size_t d = 0; d < rank; ++d)
    if (left[d] > 1)
      l.regs[d].push_back({left[d], unit[d] * lanes[d] * warps[d]});
  l.origin = "elementwise (general), " + std::to_string(v) + " consecutive elements per thread "
             "and access, " + std::to_string(lanes_left * warps_left) + " thread(s) per element";
  return l;
}

} // namespace

// ---- swizzles --------------------------------------------------------------------------------

std::string Swizzle::str() const {
  if (B == 0)
    return "none";
  return "Swizzle<" + std::to_string(B) + "," + std::to_string(M) + "," + std::to_string(S) + ">";
}

namespace {
int log2_exact(int64_t v) {
  int l = 0;
  while ((int64_t(1) << l) < v)
    ++l;
  return (int64_t(1) << l) == v ? l : -1;
}
} // namespace

Swizzle ldmatrix_swizzle(int64_t cols, int elem_bytes) {
  int64_t row_bytes = cols * elem_bytes;
  int chunks_log = log2_exact(row_bytes / 16);
  if (row_bytes % 16 != 0 || chunks_log < 1)
    return {};
  Swizzle s;
  s.M = log2_exact(16 / elem_bytes);
  TG_ASSERT(s.M >= 0, "swizzle: element size must divide 16");
  // B: as many chunk bits as a 128-byte line has (3), or fewer for short rows.
  s.B = chunks_log < 3 ? chunks_log : 3;
  // S: where the row bits used for XOR start, relative to the chunk bits. A row of 128 bytes
  // or more starts its row bits at M + log2(chunks): XOR the chunk with row % 8. Shorter rows
  // pack 128 / row_bytes rows per line; XOR with the line index instead (rows / lines).
  int row_shift = s.M + chunks_log;          // bit where the row index starts
  int line_shift = s.M + 3;                  // bit where the 128-byte line index starts
  s.S = (row_shift > line_shift ? row_shift : line_shift) - s.M;
  return s;
}

int wavefronts(const std::vector<int64_t>& addresses, int bytes_per_access) {
  // Each access covers bytes_per_access / 4 consecutive banks; a wavefront serves one 4-byte
  // word per bank. Count, per bank, the distinct words requested.
  std::map<int, std::set<int64_t>> words;
  for (int64_t a : addresses)
    for (int b = 0; b < bytes_per_access; b += 4) {
      int64_t word = (a + b) / 4;
      words[static_cast<int>(word % 32)].insert(word);
    }
  size_t worst = 0;
  for (const auto& [bank, w] : words)
    worst = std::max(worst, w.size());
  return static_cast<int>(worst);
}

} // namespace tilegen::layout
