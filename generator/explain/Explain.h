// Explain: the pictures of `tilegen explain` (docs/explain.md). For one instance of a kernel on
// one target it draws, from the generator's own decisions (nothing is recomputed here):
//  * the fragment layout of each gemm's operands and accumulator: a grid of the tile whose cells
//    say which thread (warp, lane) and register hold the element (LayoutInference's plan);
//  * each shared buffer's swizzle as a bank map of its 16-byte chunks, with the accesses that
//    use it (ldmatrix / core-matrix reads, the copy's 16-byte chunk stores) and their bank
//    conflicts per layout::wavefronts;
//  * the pipelined main loop as a timeline: stages, copies and computes per iteration, the
//    barriers, and on warp-specialized targets the producer warp and consumer warpgroups with
//    their full/empty mbarriers;
//  * the chosen configuration and the tile recommender's ranking per shape class.
// Output is self-contained HTML (inline SVG and CSS, no script, nothing fetched) or one SVG;
// deterministic (every list follows program or declaration order, never pointer order). Spec
// text in the page goes through xml_text (support/TextEscape.h).
#pragma once

#include "ir/IR.h"
#include "passes/LayoutInference.h"
#include "passes/TileRecommend.h"
#include "targets/Target.h"

#include <string>

namespace tilegen::explain {

enum class Format { Html, Svg };

struct ExplainInput {
  const ir::Kernel* kernel = nullptr;        // instantiated for `target` ("large" class)
  const passes::LayoutPlan* plan = nullptr;  // infer_layouts of `kernel`; null where the
                                             // target has no thread layouts (C, WGSL)
  const passes::Recommendation* rec = nullptr; // GPU targets (CUDA, HIP); null elsewhere
  const Target* target = nullptr;
  std::string spec_path;
  std::string instance;
};

std::string render(const ExplainInput& in, Format format);

// ---- the parts render() assembles (ExplainLayouts.cpp, ExplainPipeline.cpp) ------------------

// One section of the page: a title, lines of text (plain, escaped when printed), an optional
// table (first row the header; a row whose first cell starts with '*' is highlighted, the '*'
// dropped) and an optional picture (an SVG body of width x height, already escaped).
struct Picture {
  std::string svg; // elements inside <svg>
  int width = 0, height = 0;
  std::string attrs; // extra attributes of the <svg> element (data-*), already escaped
};
struct Section {
  std::string id;
  std::string title;
  std::vector<std::string> lines;
  std::vector<std::vector<std::string>> table;
  std::vector<Picture> pictures;
};

std::vector<Section> layout_sections(const ExplainInput& in);
std::vector<Section> swizzle_sections(const ExplainInput& in);
Section pipeline_section(const ExplainInput& in);

} // namespace tilegen::explain
