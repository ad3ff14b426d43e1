// HipEmitter: a gemm on an AMD matrix instruction (MFMA on CDNA, WMMA on RDNA3).
//
// Each wave owns (M / WM) x (N / WN) of the tile as instruction tiles (layout/MatrixCore.h's
// accumulator). Per block of `steps` instructions along K, a lane reads its operand values from
// LDS (layout::operand_outer / operand_k: 16-byte reads of consecutive values along K of one row
// of A, and of B where it is K-major, 8-byte ones where a lane's values are no whole 16-byte
// chunks; one element per row otherwise: layout::matrix_core_operand_reads lists them), then issues the instructions of every
// tile pair. Operand values travel as 64-bit words of four 16-bit values (eight FP8 ones); the
// builtins take them bit-cast to the instruction's vector types (FP8: the 64-bit word itself).
// tests/unit/layout/MatrixCoreTest.cpp executes the same mappings on an emulator of the
// instructions.
//
// FP8 on gfx942 (AmdMatrixShape::fnuz): the instructions read e4m3fnuz / e5m2fnuz, the spec's
// bytes are OCP e4m3 / e5m2. Each loaded word goes through tg_fp8_fnuz (layout::fp8_ocp_to_fnuz:
// -0 to +0, NaN and e5m2's infinities to FNUZ's NaN, every other byte kept, which FNUZ reads as
// exactly half the OCP value), so every product is the OCP product / 4: the gemm multiplies its
// accumulator by 1/4 before the instructions and by 4 after them (powers of two, exact for any
// accumulator that is not an f32 subnormal; docs/hip.md "FP8 on gfx942").
#include "emit/HipEmitter.h"

#include "ir/IRVisitor.h"
#include "layout/MatrixCore.h"
#include "support/InternalError.h"

#include <algorithm>
#include <functional>
#include <map>

namespace tilegen::emit {

using namespace ir;

namespace {

std::string str(int64_t v) { return std::to_string(v); }

// The accumulators of a loop body's FP8 FNUZ gemms (`fnuz` says which gemm is one), and every
// other use of any buffer (counted per buffer; a FNUZ gemm's A and B count, its C does not).
class FnuzUses : public IRVisitor {
public:
  explicit FnuzUses(std::function<bool(const Gemm*)> fnuz) : fnuz_(std::move(fnuz)) {}
  std::vector<const Buffer*> accs;
  std::map<const Buffer*, int> other;

protected:
  void visit_Gemm(const Gemm* g) override {
    if (!fnuz_(g)) {
      IRVisitor::visit_Gemm(g);
      return;
    }
    if (std::find(accs.begin(), accs.end(), g->c.get()) == accs.end())
      accs.push_back(g->c.get());
    ++other[g->a.get()];
    ++other[g->b.get()];
  }
  void visit_buffer_use(const BufferPtr& b) override { ++other[b.get()]; }

private:
  std::function<bool(const Gemm*)> fnuz_;
};

} // namespace

// A FNUZ gemm's accumulator is used at 1/4 of its value (products / 4). Around one gemm that is
// a multiply of every accumulator register before and after it; in a k loop on CDNA3 those
// multiplies made the compiler keep a VGPR copy of the AGPR accumulators (gemm_fp8 gfx942:
// 340 / 414 unified registers, 272 without them). So a loop whose body uses an accumulator only
// as C of FNUZ gemms holds it at 1/4 for all its iterations: one multiply before the loop, one
// after (the same values: scaling by a power of two commutes with f32 rounding for every value
// that is not subnormal, and sums of FP8 products never are).
std::vector<const Buffer*> HipEmitter::fnuz_hoisted(const For* f) const {
  FnuzUses uses([&](const Gemm* g) {
    const auto it = plan_.gemms.find(g);
    if (it == plan_.gemms.end() || it->second.kind != passes::GemmPlan::MatrixCore ||
        it->second.matrix < 0 || static_cast<size_t>(it->second.matrix) >= t_.hip.matrix.size())
      return false;
    return t_.hip.matrix[static_cast<size_t>(it->second.matrix)].fnuz && g->a->dtype.bytes() == 1;
  });
  uses.visit(f->body);
  std::vector<const Buffer*> out;
  for (const Buffer* acc : uses.accs)
    if (!uses.other.count(acc) && !fnuz_scaled_.count(acc))
      out.push_back(acc);
  return out;
}

void HipEmitter::fnuz_scale(const Buffer* acc, bool before) {
  line(before ? "// FNUZ operands read as half their OCP values: products / 4 into acc / 4 in every "
                "iteration of the loop below, exactly (one scaling around the loop)"
              : "// acc x 4 after the loop above: the OCP values");
  line("#pragma unroll");
  line("for (int tg_r = 0; tg_r < " + str(frag(acc).num_regs()) + "; ++tg_r) " + name(acc->name) + "[tg_r] *= " +
       (before ? "0.25f" : "4.0f") + ";");
}

void HipEmitter::gemm_matrix_core(const Gemm* g, const passes::GemmPlan& p) {
  TG_ASSERT(p.matrix >= 0 && static_cast<size_t>(p.matrix) < t_.hip.matrix.size(),
            "HIP emitter: gemm without a matrix instruction");
  const AmdMatrixShape& ms = t_.hip.matrix[static_cast<size_t>(p.matrix)];
  const int64_t wave = t_.gpu.warp_size;
  const auto& S = layout::matrix_core_shape(layout::matrix_core_kind(ms.m, ms.n, ms.k, wave));
  const Buffer *A = g->a.get(), *B = g->b.get(), *C = g->c.get();
  const auto& L = frag(C);
  const int64_t M = L.shape[0], N = L.shape[1];
  const int64_t K = cuda_const(g->transpose_a ? A->shape[0] : A->shape[1]);
  const int64_t TM = M / p.wm, TN = N / p.wn, tm = TM / ms.m, tn = TN / ms.n;
  const int64_t steps = p.steps, KB = steps * ms.k, per_lane = steps * S.k_per_lane;
  const int eb = A->dtype.bytes();  // 2, or 1: FP8 kept for an FP8 instruction (LegalizeHip)
  const int64_t vpw = 8 / eb;       // values per 64-bit word
  const int64_t words = per_lane / vpw, step_words = S.k_per_lane / vpw;
  const int64_t Q = S.acc_registers(), R1 = L.regs_of_dim(1);
  TG_ASSERT(K % KB == 0 && per_lane % vpw == 0, "HIP emitter: K is no whole number of k blocks");
  TG_ASSERT(A->dtype == B->dtype && (eb == 2 || ms.fnuz), "HIP emitter: matrix-core operand types");
  const bool bf16 = ms.in == "bf16", fp8 = eb == 1;
  const bool wmma = t_.gpu.mma == MatrixInst::Wmma;

  // The instruction's helper: operands as 64-bit words, the accumulator as a vector.
  std::string fn = "tg_mx_" + str(ms.m) + "x" + str(ms.n) + "x" + str(ms.k) + "_" + ms.in;
  if (fp8) {
    const std::string acc_t = "tg_vf" + str(Q);
    std::string h;
    h += "typedef float " + acc_t + " __attribute__((ext_vector_type(" + str(Q) + ")));\n";
    h += "struct " + fn + "_in { uint64_t w[1]; };\n";
    h += "/* " + ms.mnemonic + ": D (" + str(ms.m) + "x" + str(ms.n) + " f32) += A * B, one wave (" +
         str(wave) + " lanes), operands in the FNUZ encodings (tg_fp8_fnuz); layout/MatrixCore.h has the "
         "lanes' elements. */\n";
    h += "TG_DEV " + acc_t + " " + fn + "(" + fn + "_in a, " + fn + "_in b, " + acc_t + " d) {\n";
    h += "  return " + ms.builtin + "((long)a.w[0], (long)b.w[0], d, 0, 0, 0);\n}\n";
    builtins_.insert(h);
    builtins_.insert(
        "/* OCP e4m3 / e5m2 -> FNUZ, four bytes at a time (layout::fp8_ocp_to_fnuz): -0 -> +0, NaN\n"
        "   (and e5m2's infinities) -> 0x80, FNUZ's NaN; every other byte kept, which FNUZ reads as\n"
        "   half its OCP value. */\n"
        "template <bool E5M2> TG_DEV uint32_t tg_fp8_fnuz32(uint32_t x) {\n"
        "  const uint32_t hi = 0x80808080u, lo = 0x7f7f7f7fu;\n"
        "  const uint32_t t = x & lo;\n"
        "  const uint32_t nan = (t + (E5M2 ? 0x04040404u : 0x01010101u)) & hi;\n"
        "  const uint32_t z = x ^ hi;\n"
        "  const uint32_t negzero = ~(((z & lo) + lo) | z) & hi;\n"
        "  const uint32_t m = nan | negzero;\n"
        "  const uint32_t full = m | (m - (m >> 7));\n"
        "  return (x & ~full) | nan;\n"
        "}\n"
        "template <bool E5M2> TG_DEV uint64_t tg_fp8_fnuz(uint64_t x) {\n"
        "  return (uint64_t)tg_fp8_fnuz32<E5M2>((uint32_t)x) | (uint64_t)tg_fp8_fnuz32<E5M2>((uint32_t)(x >> 32)) << 32;\n"
        "}\n");
  } else {
    const std::string elem = bf16 ? "short" : "_Float16";
    const std::string in_t = "tg_v" + std::string(bf16 ? "s" : "h") + str(S.k_per_lane);
    const std::string acc_t = "tg_vf" + str(Q);
    std::string h;
    h += "typedef " + elem + " " + in_t + " __attribute__((ext_vector_type(" + str(S.k_per_lane) + ")));\n";
    h += "typedef float " + acc_t + " __attribute__((ext_vector_type(" + str(Q) + ")));\n";
    h += "struct " + fn + "_in { uint64_t w[" + str(step_words) + "]; };\n";
    h += "/* " + ms.mnemonic + ": D (" + str(ms.m) + "x" + str(ms.n) + " f32) += A * B, one wave (" +
         str(wave) + " lanes); layout/MatrixCore.h has the lanes' elements. */\n";
    h += "TG_DEV " + acc_t + " " + fn + "(" + fn + "_in a, " + fn + "_in b, " + acc_t + " d) {\n";
    h += "  return " + ms.builtin + "(__builtin_bit_cast(" + in_t + ", a), __builtin_bit_cast(" + in_t +
         ", b), d" + (wmma ? "" : ", 0, 0, 0") + ");\n}\n";
    builtins_.insert(h);
  }

  const std::string W = str(wave);
  open("");
  line("// " + ms.mnemonic + ": " + str(p.wm) + "x" + str(p.wn) + " waves of " + str(TM) + "x" + str(TN) +
       ", k blocks of " + str(KB) + " (" + str(steps) + " instruction(s) per operand load)");
  line("const int tg_lane = tg_tid % " + W + ", tg_wv = tg_tid / " + W + ";");
  line("const int tg_or = (tg_wv % " + str(p.wm) + ") * " + str(TM) + " + tg_lane % " + str(S.m) +
       "; // this lane's row of A");
  line("const int tg_oc = (tg_wv / " + str(p.wm) + ") * " + str(TN) + " + tg_lane % " + str(S.n) +
       "; // its column of B");
  line("const int tg_kg = ((tg_lane / " + str(S.m) + ") % " + str(S.groups) + ") * " + str(per_lane) +
       "; // its first k of each k block");
  const std::string a_ptr = shared_ptr(A), b_ptr = shared_ptr(B);
  // Word w of a lane's operand of instruction tile `t` (row or column `outer`), k block tg_kb.
  auto load = [&](const Buffer* buf, bool k_major, const std::string& ptr, const std::string& outer,
                  const std::string& dst) {
    const bool wide = k_major && layout::matrix_core_reads_16(S, steps, buf->dtype.bytes());
    line("#pragma unroll");
    open("for (int tg_w = 0; tg_w < " + str(words) + (wide ? "; tg_w += 2)" : "; ++tg_w)"));
    const std::string k = "tg_kb * " + str(KB) + " + tg_kg + tg_w * " + str(vpw);
    // FP8: OCP bytes to the FNUZ ones the instruction reads
    auto fix = [&](const std::string& w) {
      if (fp8)
        line(w + " = tg_fp8_fnuz<" + (ms.in == "e5m2" ? "true" : "false") + ">(" + w + ");");
    };
    if (wide) {
      // eight consecutive values along K: one 16-byte LDS read (ds_read_b128) of a 16-byte
      // chunk, which the swizzle keeps whole; the plan's layout is conflict-free for these reads
      // under the target's LDS bank model (layout::matrix_core_read_conflicts)
      line("const uint4 tg_v = *reinterpret_cast<const uint4*>(" + ptr + " + " +
           shared_offset(buf, outer, k) + ");");
      line(dst + " = (uint64_t)tg_v.x | (uint64_t)tg_v.y << 32;");
      std::string next = dst.substr(0, dst.rfind("[tg_w]")) + "[tg_w + 1]";
      line(next + " = (uint64_t)tg_v.z | (uint64_t)tg_v.w << 32;");
      fix(dst);
      fix(next);
    } else if (k_major) {
      // four (FP8: eight) consecutive values along K: one 8-byte LDS read
      line(dst + " = *reinterpret_cast<const uint64_t*>(" + ptr + " + " +
           shared_offset(buf, outer, k) + ");");
      fix(dst);
    } else {
      line("uint64_t tg_x = 0;");
      line("#pragma unroll");
      open("for (int tg_e = 0; tg_e < " + str(vpw) + "; ++tg_e)");
      line("tg_x |= (uint64_t)(" + std::string(fp8 ? "unsigned char" : "unsigned short") + ")" + ptr + "[" +
           shared_offset(buf, k + " + tg_e", outer) + "] << (" + str(8 * eb) + " * tg_e);");
      close();
      line(dst + " = tg_x;");
      fix(dst);
    }
    close();
  };
  // Fully unrolled, the compiler issues every k block's LDS reads up front: where they would
  // hold more than 64 registers (WMMA's 16 values per lane and tile), two blocks at a time
  // (gfx1100 spilled with 8 k blocks of 4 tiles unrolled; tests/hip/compile_all.sh).
  const int64_t block_regs = (tm + tn) * per_lane * eb / 4;
  const std::string acc = name(C->name);
  const bool rescale = fp8 && !fnuz_scaled_.count(C); // else the loop around it does (fnuz_hoisted)
  if (rescale) {
    line("// FNUZ operands read as half their OCP values: products / 4 into acc / 4, exactly");
    line("#pragma unroll");
    line("for (int tg_r = 0; tg_r < " + str(L.num_regs()) + "; ++tg_r) " + acc + "[tg_r] *= 0.25f;");
  }
  line(block_regs * (K / KB) > 64 ? "#pragma unroll 2" : "#pragma unroll");
  open("for (int tg_kb = 0; tg_kb < " + str(K / KB) + "; ++tg_kb)");
  line("uint64_t tg_a[" + str(tm) + "][" + str(words) + "], tg_b[" + str(tn) + "][" + str(words) + "];");
  line("#pragma unroll");
  open("for (int tg_i = 0; tg_i < " + str(tm) + "; ++tg_i)");
  load(A, !g->transpose_a, a_ptr, "tg_or + tg_i * " + str(S.m), "tg_a[tg_i][tg_w]");
  close();
  line("#pragma unroll");
  open("for (int tg_j = 0; tg_j < " + str(tn) + "; ++tg_j)");
  load(B, g->transpose_b, b_ptr, "tg_oc + tg_j * " + str(S.n), "tg_b[tg_j][tg_w]");
  close();
  line("#pragma unroll");
  open("for (int tg_s = 0; tg_s < " + str(steps) + "; ++tg_s)");
  line("#pragma unroll");
  open("for (int tg_i = 0; tg_i < " + str(tm) + "; ++tg_i)");
  line("#pragma unroll");
  open("for (int tg_j = 0; tg_j < " + str(tn) + "; ++tg_j)");
  line(fn + "_in tg_ai, tg_bi;");
  line("#pragma unroll");
  open("for (int tg_w = 0; tg_w < " + str(step_words) + "; ++tg_w)");
  line("tg_ai.w[tg_w] = tg_a[tg_i][tg_s * " + str(step_words) + " + tg_w];");
  line("tg_bi.w[tg_w] = tg_b[tg_j][tg_s * " + str(step_words) + " + tg_w];");
  close();
  const std::string reg = "(tg_q + " + str(Q) + " * tg_i) * " + str(R1) + " + tg_j";
  line("tg_vf" + str(Q) + " tg_d;");
  line("#pragma unroll");
  line("for (int tg_q = 0; tg_q < " + str(Q) + "; ++tg_q) tg_d[tg_q] = " + acc + "[" + reg + "];");
  line("tg_d = " + fn + "(tg_ai, tg_bi, tg_d);");
  line("#pragma unroll");
  line("for (int tg_q = 0; tg_q < " + str(Q) + "; ++tg_q) " + acc + "[" + reg + "] = tg_d[tg_q];");
  close();
  close();
  close();
  close();
  if (rescale) {
    line("#pragma unroll");
    line("for (int tg_r = 0; tg_r < " + str(L.num_regs()) + "; ++tg_r) " + acc + "[tg_r] *= 4.0f;");
  }
  close();
}

} // namespace tilegen::emit
