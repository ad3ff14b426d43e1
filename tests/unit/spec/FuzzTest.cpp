// Fuzz-style robustness: random bytes and random mutations of the shipped kernels must never
// crash, hang or throw; every rejection must come with at least one error.
#include "spec/Frontend.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string_view>

using namespace tilegen;

namespace {

std::vector<std::string> kernel_texts() {
  std::vector<std::string> out;
  std::vector<std::filesystem::path> paths;
  for (const auto& e : std::filesystem::directory_iterator(TILEGEN_KERNELS_DIR))
    if (e.path().extension() == ".yaml")
      paths.push_back(e.path());
  std::sort(paths.begin(), paths.end()); // deterministic order
  for (const auto& p : paths) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    out.push_back(ss.str());
  }
  return out;
}

// Runs the front end and checks the contract: result or at least one error, never both.
bool run_one(const std::string& text, size_t case_id) {
  std::ostringstream out;
  DiagEngine diag(out);
  auto ks = spec::load_kernels_from_text("fuzz.yaml", text, diag);
  if (ks)
    EXPECT_FALSE(diag.has_errors()) << "case " << case_id << "\n" << out.str();
  else
    EXPECT_TRUE(diag.has_errors()) << "case " << case_id << " failed without an error";
  return ks.has_value();
}

// Tokens that exercise the parser's interesting paths when spliced into a spec.
const char* const kTokens[] = {
    "[",
    "]",
    "{",
    "}",
    ":",
    "- ",
    "&a ",
    "*a",
    "!!str ",
    "\"",
    "'",
    "#",
    "\n",
    "\t",
    "---\n",
    "(",
    ")",
    "?",
    "99999999999999999999",
    "-inf",
    "nan",
    "1e999",
    "A_s",
    "acc",
    "BM",
    "T",
    "bool",
    "exp(",
    "cdiv(",
    "let ",
    "+=",
    "==",
    "&&",
    "\\",
    "|",
    ">",
    "%",
    "\xFF",
    "\xC3",
    std::string("\0", 1).c_str(),
    "body:",
    "  - ",
    "fill: {dst: x, value: 0}",
    "0",
    "-1",
};

char pick(std::string_view chars, std::mt19937_64& rng) {
  return chars[rng() % chars.size()];
}

std::string mutate(const std::string& base, std::mt19937_64& rng) {
  std::string s = base;
  int edits = 1 + static_cast<int>(rng() % 8);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    size_t pos = rng() % s.size();
    switch (rng() % 6) {
    case 0:
      s.erase(pos, 1 + rng() % 16);
      break; // delete a run
    case 1:
      s.insert(pos, kTokens[rng() % std::size(kTokens)]);
      break; // splice a token
    case 2:
      s[pos] = static_cast<char>(rng() % 256);
      break; // flip a byte
    case 3:
      s.insert(pos, s.substr(rng() % s.size(), rng() % 64));
      break;  // duplicate a piece
    case 4: { // swap two lines
      size_t a = s.rfind('\n', pos), b = s.find('\n', pos + 1);
      if (a != std::string::npos && b != std::string::npos)
        std::swap(s[a + 1], s[b - 1]);
      break;
    }
    case 5:
      s[pos] = pick(" -:[]{}\"'#,0123456789abcxyz", rng);
      break; // plausible char
    }
  }
  return s;
}

} // namespace

TEST(Fuzz, RandomBytes) {
  std::mt19937_64 rng(12345);
  auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < 2000; ++i) {
    size_t n = rng() % 512;
    std::string s(n, '\0');
    bool printable = i % 2 == 0; // half: bytes YAML might accept
    for (auto& c : s)
      c = printable ? pick(" \n-:[]{}\"'#,.abcABC0123456789&*!|>?", rng)
                    : static_cast<char>(rng() % 256);
    run_one(s, i);
  }
  auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(secs, 60.0);
}

TEST(Fuzz, MutatedKernels) {
  auto bases = kernel_texts();
  ASSERT_FALSE(bases.empty());
  std::mt19937_64 rng(424242);
  auto start = std::chrono::steady_clock::now();
  size_t accepted = 0;
  for (size_t i = 0; i < 2000; ++i) {
    std::string s = mutate(bases[i % bases.size()], rng);
    std::ostringstream out;
    DiagEngine diag(out);
    auto ks = spec::load_kernels_from_text("fuzz.yaml", s, diag);
    EXPECT_EQ(ks.has_value(), !diag.has_errors()) << "case " << i << "\n" << out.str();
    accepted += ks.has_value();
  }
  auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(secs, 120.0);
  // Some mutations (in comments, in summaries) keep the spec valid; most do not.
  EXPECT_LT(accepted, 2000u);
}

TEST(Fuzz, OriginalKernelsLoad) {
  for (const auto& text : kernel_texts())
    run_one(text, 0);
}

// Random expressions and statements in every position of a small spec: exercises name
// resolution and typing (where an unchecked case would trip an IR assertion) rather than YAML.
TEST(Fuzz, RandomExpressions) {
  const char* const atoms[] = {
      "i",     "j", "k", "M",   "BM",   "x[i, j]", "m[i]", "A[i, j]", "C[i, j]",     "s",
      "flag",  "0", "1", "2.5", "-inf", "nan",     "true", "T",       "cdiv(M, BM)", "f16(x[i, j])",
      "i8(1)", "t", "q"};
  const char* const ops[] = {" + ",  " - ",  " * ",  " / ",  " % ", " < ",
                             " == ", " && ", " || ", " != ", " >= "};
  const char* const calls[] = {"exp", "max",   "min",   "abs",  "sqrt", "cdiv", "bool",
                               "i32", "floor", "rsqrt", "tanh", "erf",  "log2"};
  std::mt19937_64 rng(777);
  std::function<std::string(int)> gen = [&](int depth) -> std::string {
    int r = static_cast<int>(rng() % 10);
    if (depth <= 0 || r < 3)
      return atoms[rng() % std::size(atoms)];
    if (r < 6)
      return "(" + gen(depth - 1) + ops[rng() % std::size(ops)] + gen(depth - 1) + ")";
    if (r < 7)
      return (rng() % 2 ? "-" : "!") + gen(depth - 1);
    if (r < 8)
      return gen(depth - 1) + " ? " + gen(depth - 1) + " : " + gen(depth - 1);
    std::string c = calls[rng() % std::size(calls)];
    return c + "(" + gen(depth - 1) + (rng() % 2 ? ", " + gen(depth - 1) : "") + ")";
  };
  size_t accepted = 0;
  for (size_t n = 0; n < 2000; ++n) {
    // One random expression per program, in one of four positions; the rest is valid.
    std::string e = gen(3);
    int where = static_cast<int>(n % 4);
    std::string let = where == 0 ? e : "x[i, j] * 2";
    std::string store = where == 1 ? e : "t + 1";
    std::string fill = where == 2 ? e : "0";
    std::string cond = where == 3 ? e : "flag";
    std::string spec = "kernel: f\nsummary: s\ntypes: {T: [f16, bf16]}\n"
                       "params: {M: dim}\nflags: {flag: bool}\nscalars: {s: T}\n"
                       "tensors:\n  A: {type: T, shape: [M, M]}\n"
                       "  C: {type: f32, shape: [M, M], access: readwrite}\n"
                       "schedule: {BM: [4]}\ngrid: {bx: \"cdiv(M, BM)\"}\nbody:\n"
                       "  - fragment: {x: [T, BM, BM], m: [f32, BM]}\n"
                       "  - for: {var: k, extent: M}\n    body:\n"
                       "      - fill: {dst: m, value: \"" +
                       fill +
                       "\"}\n"
                       "      - if: \"" +
                       cond +
                       "\"\n        then:\n"
                       "          - parallel: {i: BM, j: BM}\n            body:\n"
                       "              - \"let t = " +
                       let +
                       "\"\n"
                       "              - \"x[i, j] = " +
                       store +
                       "\"\n"
                       "              - \"C[i, j] += t\"\n";
    accepted += run_one(spec, n);
  }
  // Enough random programs must type-check for the deep paths (casts, stores) to be reached.
  EXPECT_GT(accepted, 100u);
}
