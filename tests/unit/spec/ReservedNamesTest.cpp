// The reserved-name policy (support/ReservedNames.h): docs/spec.md lists exactly the tables, the
// printers' own lists are inside the policy, every kind of declared name is checked, and the
// spelling rules hold at their edges.
#include "dispatch/Naming.h"
#include "emit/CEmitter.h"
#include "emit/MslEmitter.h"
#include "emit/WgslEmitter.h"
#include "passes/Pipeline.h"
#include "spec/ExprParser.h"
#include "spec/Frontend.h"
#include "support/ReservedNames.h"
#include "targets/Target.h"
#include "tools/Driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

using namespace tilegen;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A spec that declares one name of every kind; `@X@` placeholders are replaced by names.
const char* const kEveryKind = R"SPEC(kernel: @kernel@
summary: every kind of name
types: {@type@: [f32]}
params:
  @dim@: dim
  @value@: {values: [128]}
flags: {@flag@: bool}
scalars: {@scalar@: f32}
tensors:
  @tensor@: {type: @type@, shape: [@dim@, @value@], access: readwrite}
schedule:
  @tile@: [2]
  threads: [128]
  classes:
    @class@: {when: "@dim@ <= 64", shape: {@dim@: 64}}
grid: {@block@: "cdiv(@dim@, @tile@)"}
threads: threads
body:
  - fragment: {@buffer@: [f32, @tile@, @value@]}
  - local: {@local@: [f32, 4]}
  - copy: {src: "@tensor@[@block@ * @tile@, 0]", dst: @buffer@}
  - for: {var: @loop@, extent: 2}
    body:
      - parallel: {@par@: @tile@, j: @value@}
        body:
          - "let @let@ = @buffer@[@par@, j] * @scalar@"
          - "@buffer@[@par@, j] = @flag@ ? @let@ : @let@ + f32(@loop@)"
  - copy: {src: @buffer@, dst: "@tensor@[@block@ * @tile@, 0]"}
)SPEC";

struct Slot {
  const char* placeholder;
  const char* fallback; // the name used when another slot is under test
  const char* kind;     // as the message says it
  bool joined;          // joined with '_' into symbol and file names: no trailing '_'
  bool bare;            // appears in generated code as it is: every reserved list applies
};
const Slot kSlots[] = {
    {"kernel", "k", "kernel", true, false},          {"type", "T", "type parameter", false, false},
    {"dim", "M", "param", true, true},               {"value", "D", "param", true, true},
    {"flag", "fl", "flag", true, true},              {"scalar", "alpha", "scalar", false, true},
    {"tensor", "X", "tensor", false, true},          {"tile", "BM", "tile constant", false, true},
    {"class", "small", "shape class", true, false},  {"block", "bx", "block index", false, true},
    {"buffer", "acc", "buffer", false, true},        {"local", "tmp", "buffer", false, true},
    {"loop", "kk", "loop variable", false, true},    {"par", "i", "parallel index", false, true},
    {"let", "t", "let temporary", false, true},
};

std::string spec_with(const std::string& slot, const std::string& name) {
  std::string s = kEveryKind;
  for (const Slot& sl : kSlots)
    s = std::regex_replace(s, std::regex("@" + std::string(sl.placeholder) + "@"),
                           sl.placeholder == slot ? name : std::string(sl.fallback));
  return s;
}

// The front end's messages for the spec with `name` in `slot` ("" when it is accepted).
std::string errors(const std::string& slot, const std::string& name) {
  std::ostringstream err;
  DiagEngine diag(err);
  auto ks = spec::load_kernels_from_text("every.yaml", spec_with(slot, name), diag);
  EXPECT_EQ(ks.has_value(), !diag.has_errors());
  return err.str();
}

} // namespace

// docs/spec.md's "Reserved names" section is the tables as reserved_names_markdown() prints them.
// TILEGEN_UPDATE_RESERVED_DOC=1 writes them there instead (after a change of the tables).
TEST(ReservedNames, DocMatchesTables) {
  const std::string path = std::string(TILEGEN_SOURCE_DIR) + "/docs/spec.md";
  std::string doc = read(path);
  const std::string begin = "<!-- reserved-names:begin -->\n", end = "<!-- reserved-names:end -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  const std::string listed = doc.substr(b + begin.size(), e - b - begin.size());
  if (std::getenv("TILEGEN_UPDATE_RESERVED_DOC") && listed != reserved_names_markdown()) {
    doc.replace(b + begin.size(), e - b - begin.size(), reserved_names_markdown());
    std::ofstream(path) << doc;
    return;
  }
  EXPECT_EQ(listed, reserved_names_markdown())
      << "docs/spec.md's reserved-name list differs from generator/support/ReservedNames.cpp; "
         "between the two markers it should read:\n"
      << reserved_names_markdown();
}

// The words the printers check spec names against (CFamilyPrinter, and WGSL's own list) are all
// refused by the front end, so name() never meets one (it asserts that).
TEST(ReservedNames, PrinterListsAreRefused) {
  std::ostringstream err;
  DiagEngine diag(err);
  auto ks = spec::load_kernels(std::string(TILEGEN_SOURCE_DIR) + "/kernels/softmax.yaml", diag);
  ASSERT_TRUE(ks.has_value()) << err.str();
  const ir::Kernel& k = ks->front();
  auto insts = passes::enumerate_instances(k);
  for (const char* tname : {"c", "wgsl", "metal"}) {
    const Target* t = find_target(tname);
    ASSERT_NE(t, nullptr);
    auto ik = passes::instantiate(k, insts.front(), *t, diag);
    ASSERT_TRUE(ik.has_value()) << err.str();
    emit::VariantInfo info{"tgv_x__softmax__f32__" + std::string(tname), "softmax.yaml"};
    std::set<std::string> words;
    if (t->backend == Backend::WGSL)
      words = emit::WgslEmitter(*ik, *t, info).printer_reserved_words();
    else if (t->backend == Backend::Metal)
      words = emit::MslEmitter(*ik, *t, info).printer_reserved_words();
    else
      words = emit::CEmitter(*ik, *t, info).printer_reserved_words();
    EXPECT_GT(words.size(), 40u);
    for (const auto& w : words)
      EXPECT_NE(spec::declared_name_problem(w, "tensor", false), "")
          << "'" << w << "' is reserved by the " << tname << " printer but accepted";
  }
}

// Every kind of declared name goes through the same policy, with the kind in the message:
// all of it for names that appear as they are in generated code, the spec language's words and
// tilegen's families for kernels, type parameters and shape classes (parts of longer names).
TEST(ReservedNames, EveryKindIsChecked) {
  ASSERT_EQ(errors("", ""), "") << "the template spec itself must be valid";
  for (const Slot& s : kSlots) {
    for (const char* bad : {"EOF", "class", "int64_t", "blockIdx", "tg_x", "Tgfoo", "fn",
                            "toString", "omp_x", "cudaFoo", "args", "exp", "TILEGEN_X"}) {
      const bool part = std::string(bad) == "exp" || std::string(bad) == "tg_x" ||
                        std::string(bad) == "Tgfoo" || std::string(bad) == "TILEGEN_X";
      const std::string e = errors(s.placeholder, bad);
      if (!s.bare && !part) {
        EXPECT_EQ(e, "") << s.placeholder << " = " << bad << " (only a part of generated names)";
        continue;
      }
      EXPECT_NE(e.find("'" + std::string(bad) + "' is a reserved name and cannot name a " +
                       s.kind + ": it is "),
                std::string::npos)
          << s.placeholder << " = " << bad << ":\n"
          << e;
    }
    for (const char* bad : {"_x", "a__b"})
      EXPECT_NE(errors(s.placeholder, bad).find("invalid " + std::string(s.kind) + " name '" + bad),
                std::string::npos)
          << s.placeholder << " = " << bad;
  }
}

// The edges of the spelling rules: 64 characters pass, 65 do not; a trailing '_' only where a
// name is joined into symbol and file names.
TEST(ReservedNames, SpellingEdges) {
  for (const Slot& s : kSlots) {
    const std::string n64 = std::string(s.fallback) + std::string(64 - std::string(s.fallback).size(), 'x');
    EXPECT_EQ(errors(s.placeholder, n64), "") << s.placeholder;
    EXPECT_NE(errors(s.placeholder, n64 + "x").find("names are at most 64 characters"),
              std::string::npos)
        << s.placeholder;
    const std::string trailing = std::string(s.fallback) + "_";
    const std::string e = errors(s.placeholder, trailing);
    if (s.joined)
      EXPECT_NE(e.find("must not end with '_'"), std::string::npos) << s.placeholder << "\n" << e;
    else
      EXPECT_EQ(e, "") << s.placeholder;
  }
  // Near the edges, allowed: a reserved word with a suffix, capitalized, or with a trailing '_'.
  for (const char* ok : {"Out", "expf_x", "int64", "Class", "EOF1", "M_PI2", "blockIdx2", "xtg"})
    EXPECT_EQ(reserved_name_reason(ok), "") << ok;
  for (const char* no : {"expf", "half", "M_PI", "INT64_MAX", "TILEGEN_RUNTIME_H", "select",
                         "workgroupBarrier", "constructor", "nv_bfloat16", "CUtensorMap", "TG"})
    EXPECT_NE(reserved_name_reason(no), "") << no;
}

// The ES module declares at its top level exactly the names of dispatch::js_module_names(), the
// exports and their VARIANTS_ tables (Driver::load's library table knows them all).
TEST(ReservedNames, JsModuleTopLevelNames) {
  std::ostringstream out, err;
  tools::Driver driver(out, err);
  tools::Options o;
  o.lib = "lib";
  o.targets = {"wgsl"};
  o.specs = {std::string(TILEGEN_SOURCE_DIR) + "/kernels/softmax.yaml"};
  auto files = driver.build_outputs(o);
  ASSERT_TRUE(files.has_value()) << err.str();
  std::string js;
  for (const auto& f : *files)
    if (f.name == "lib.js")
      js = f.contents;
  ASSERT_FALSE(js.empty());
  // Top-level declarations start a line; WGSL shader text sits in template literals (skipped).
  std::set<std::string> declared;
  bool in_template = false;
  std::istringstream lines(js);
  std::regex decl(R"(^(?:export\s+)?(?:async\s+)?(?:const|let|var|function|class)\s+([A-Za-z_$][\w$]*))");
  std::regex more(R"(,\s*([A-Za-z_$][\w$]*)\s*=)");
  for (std::string line; std::getline(lines, line);) {
    const bool was = in_template;
    for (char c : line)
      if (c == '`')
        in_template = !in_template;
    std::smatch m;
    if (was || !std::regex_search(line, m, decl))
      continue;
    declared.insert(m[1]);
    if (line.rfind("const ", 0) == 0)
      for (std::sregex_iterator it(line.begin(), line.end(), more), end; it != end; ++it)
        declared.insert((*it)[1]);
  }
  const auto& known = dispatch::js_module_names();
  for (const auto& n : declared) {
    const bool kernel_name = n.rfind("lib_softmax_", 0) == 0 || n.rfind("VARIANTS_lib_softmax_", 0) == 0;
    EXPECT_TRUE(kernel_name || std::find(known.begin(), known.end(), n) != known.end())
        << "the ES module declares '" << n << "' at its top level: add it to js_module_names()";
  }
  for (const auto& n : known)
    EXPECT_TRUE(declared.count(n)) << "js_module_names() lists '" << n << "', the module does not declare it";
}
