// Layouts are values. Two kinds, both in the Shape:Stride style:
//
//  * FragmentLayout: how a fragment tile (a per-block register tile of rank 1 or 2) is spread
//    over the threads of a block and their registers. The thread index is decomposed in mixed
//    radix by `thread_modes` (first mode fastest); each register dim d has its own register
//    counter r_d decomposed by `regs[d]`. The element a thread holds in register (r_0, r_1) is
//        coord_d = sum_k digit_k(tid) * thread_modes[k].stride[d]
//                + sum_m digit_m(r_d)  * regs[d][m].stride
//    A thread mode whose strides are all 0 replicates: every thread along it holds the same
//    elements (a row vector next to an mma accumulator). The register index of (r_0, r_1) in
//    the thread's array is r_0 * R_1 + r_1 (row-major over dims).
//
//  * Swizzle: a shared buffer's physical offset of logical element offset `o`:
//        o ^ (((o >> (M + S)) & (2^B - 1)) << M)
//    i.e. the 16-byte chunk index (bits M..M+B-1 for 2^M elements per chunk) is XORed with
//    bits of the row. B = 0 is the identity.
//
// Property tests: tests/unit/layout/LayoutTest.cpp (coverage, replication, bank conflicts).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tilegen::layout {

struct RegMode {
  int64_t size;
  int64_t stride; // coordinate stride along its dim
  bool operator==(const RegMode&) const = default;
};

struct ThreadMode {
  int64_t size;
  std::vector<int64_t> stride; // coordinate stride along each dim (0 = does not move it)
  std::string name;            // "lane%4", "warp_m": for comments and error messages
  bool operator==(const ThreadMode&) const = default;
};

struct FragmentLayout {
  std::vector<int64_t> shape;            // logical tile shape
  std::vector<ThreadMode> thread_modes;  // product of sizes = threads of the block
  std::vector<std::vector<RegMode>> regs; // per dim
  std::string origin;                    // what decided it ("mma.sync m16n8k16 accumulator, ...")

  size_t rank() const { return shape.size(); }
  int64_t threads() const;
  int64_t regs_of_dim(size_t d) const; // R_d
  int64_t num_regs() const;            // product of R_d
  int64_t replication() const;         // threads holding each element
  // Thread-independent part: coordinate along d of register counter r_d.
  int64_t reg_coord(size_t d, int64_t r_d) const;
  // Thread part: coordinate along d of thread tid (before adding reg_coord).
  int64_t thread_coord(size_t d, int64_t tid) const;

  // The layout of dim d alone: thread strides along d and the reg modes of d. Two fragments
  // agree on an index variable when their dim maps are equal (same thread decomposition too).
  struct DimMap {
    std::vector<int64_t> thread_sizes;
    std::vector<int64_t> thread_strides;
    std::vector<RegMode> regs;
    bool operator==(const DimMap&) const = default;
  };
  DimMap dim_map(size_t d) const;
  // A layout built from one dim map per dim (they must share the thread decomposition).
  static FragmentLayout from_dim_maps(const std::vector<DimMap>& maps,
                                      const std::vector<std::string>& mode_names,
                                      std::vector<int64_t> shape, std::string origin);

  // This layout with dim d removed (the result of reducing over d): thread modes that only
  // moved d become replicating; d's register modes disappear.
  FragmentLayout drop_dim(size_t d) const;

  // "[64, 64] threads (4:<0,2> lane%4)(8:<1,0> lane/4)(4:<16,0> warp) regs <(2:8)(2:16)> x <(2:1)(8:8)>"
  std::string str() const;
};

// ---- Factories (the hardware facts live in the callers' tables) ------------------------------

// The f32 accumulator of mma.sync m16n8k16 for an [M, N] tile computed by WM x WN warps
// (warp w: w % WM along M, w / WM along N), each warp owning a (M/WM) x (N/WN) tile of
// 16 x 8 instruction tiles. Lane = 4 * g + t owns rows g, g + 8 and columns 2t, 2t + 1 of each.
FragmentLayout mma_m16n8k16_accumulator(int64_t M, int64_t N, int64_t WM, int64_t WN);

// One Metal simdgroup_matrix 8x8 (float, half or bfloat) over the 32 lanes of a SIMD-group:
// thread_elements() of lane l are the elements (r, c) and (r, c + 1) with
//   r = bit1(l) + 2 bit2(l) + 4 bit4(l),   c = 2 bit0(l) + 4 bit3(l)
// (quads of lanes hold 2x4 blocks: lanes 0-3 rows 0-1 columns 0-3, lanes 8-11 rows 0-1
// columns 4-7, lanes 16-19 rows 4-5). This is the storage order of Apple's patent US11256518B2
// that MLX, llama.cpp and metal-flash-attention rely on when they read thread_elements();
// Apple's MSL specification leaves it unstated (docs/metal.md).
FragmentLayout simdgroup_matrix_8x8();

// The f32 accumulator of simdgroup_multiply_accumulate for an [M, N] tile computed by
// WM x WN SIMD-groups (SIMD-group s: s % WM along M, s / WM along N), each owning a
// (M/WM) x (N/WN) tile of 8x8 matrices laid out as simdgroup_matrix_8x8(): register
// (i, e + 2 j) of a lane is element e of the lane's pair in matrix (i, j).
FragmentLayout simdgroup_accumulator(int64_t M, int64_t N, int64_t WM, int64_t WN);

// A SIMT accumulator for FMA tiles: threads TY x TX (tx fastest); thread (ty, tx) owns rows
// ty + TY * i (i < M / TY) and columns 4 * tx + 4 * TX * j + e (e < 4, j < N / (4 TX)).
FragmentLayout simt_accumulator(int64_t M, int64_t N, int64_t TY, int64_t TX);

// Elementwise tiles (no matrix instruction) of rank 1 to 4 and parallel loops no fragment
// drives: `vec` consecutive elements of the last dim per thread and register group, lanes side
// by side along it, warps over rows first (a block of W warps gives each warp M / W rows when
// M >= W, else splits the columns among warps too). Where those divisions fail (fewer elements
// than threads, a warp count that is no power of two, columns 32 lanes do not divide, rank 3
// or 4), lanes take power-of-two parts of the dims from the last one, warps divisors of what
// is left from the first one, and the remaining threads replicate: every shape has a layout.
// A warp is `lanes_per_warp` threads (32 on CUDA; a wave64 HIP target's 64: GpuFacts::warp_size).
FragmentLayout elementwise(const std::vector<int64_t>& shape, int64_t threads, int64_t vec,
                           int64_t lanes_per_warp = 32);

// Runs of `vec` consecutive elements of the last dim per thread (vec a power of two dividing
// it), lanes side by side along the last dim and then over the rows, warps over the rows:
// elementwise's general arrangement, which keeps the runs whole where the regular one would
// narrow them to fit 32 lanes across a row ([128, 64] with vec 8: 8 lanes along a row, 4
// rows per warp). Vectorized parallel loops (passes/VectorParallel) take it. Every thread
// coordinate and register coordinate of the last dim other than the run's own is a multiple
// of vec, so each run starts at a multiple of vec.
FragmentLayout elementwise_runs(const std::vector<int64_t>& shape, int64_t threads, int64_t vec,
                                int64_t lanes_per_warp = 32);

// ---- Shared-memory swizzles ------------------------------------------------------------------

struct Swizzle {
  int B = 0, M = 0, S = 0;
  int64_t apply(int64_t offset) const {
    return B == 0 ? offset : offset ^ (((offset >> (M + S)) & ((int64_t(1) << B) - 1)) << M);
  }
  bool operator==(const Swizzle&) const = default;
  std::string str() const; // "Swizzle<3,3,3>" or "none"
};

// The XOR swizzle that makes 8 consecutive rows of 16-byte chunks (one ldmatrix 8x8 matrix,
// or the cp.async chunks of a warp) fall in distinct bank groups, for a row-major
// [rows, cols] buffer of `elem_bytes` elements. Identity when a row is less than 32 bytes or
// the row length is not a power of two times 16 bytes.
Swizzle ldmatrix_swizzle(int64_t cols, int elem_bytes);

// Bank-conflict model: for `addresses` (byte offsets, one per thread of a quarter/half/full
// warp phase) of `bytes_per_access` each, the number of shared-memory wavefronts needed
// (1 = conflict-free). 32 banks of 4 bytes; a 16-byte access per thread is served 8 threads
// per wavefront.
int wavefronts(const std::vector<int64_t>& addresses, int bytes_per_access);

} // namespace tilegen::layout
