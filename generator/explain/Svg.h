// Small SVG helpers of tilegen explain: elements as text, numbers without locale, colors from
// integers (deterministic palettes).
#pragma once

#include <cstdint>
#include <string>

namespace tilegen::explain::svg {

// hsl() color of item i of n around the hue circle, at lightness `light` percent.
std::string hue_color(int64_t i, int64_t n, int light = 72);
std::string rect(int x, int y, int w, int h, const std::string& fill, const std::string& extra = "");
// Text centered at (x, y) (x is the middle); `text` is escaped here.
std::string text(int x, int y, const std::string& text, int size = 10,
                 const std::string& extra = "");
// Text starting at (x, y).
std::string text_left(int x, int y, const std::string& text, int size = 11,
                      const std::string& extra = "");
std::string line(int x1, int y1, int x2, int y2, const std::string& stroke,
                 const std::string& extra = "");

} // namespace tilegen::explain::svg
