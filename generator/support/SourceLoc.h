// SourceLoc: where a construct came from in a spec file. Carried from the YAML node marks
// through the spec AST into the IR, so that late passes can still report user errors at the
// right line and emitters can comment generated code with its origin.
#pragma once

#include <memory>
#include <string>

namespace tilegen {

struct SourceLoc {
  std::shared_ptr<const std::string> file; // shared: thousands of locs point at one file name
  int line = 0;                            // 1-based; 0 = unknown
  int col = 0;                             // 1-based; 0 = unknown
  int length = 1;                          // width of the caret range (>= 1)

  bool known() const { return file && line > 0; }
  std::string str() const; // "file:line:col" or "<unknown>"
};

} // namespace tilegen
