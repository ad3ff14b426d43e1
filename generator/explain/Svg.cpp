#include "explain/Svg.h"

#include "support/TextEscape.h"

namespace tilegen::explain::svg {

namespace {
std::string n(int v) { return std::to_string(v); }
} // namespace

std::string hue_color(int64_t i, int64_t count, int light) {
  int64_t hue = count > 0 ? (i % count) * 360 / count : 0;
  return "hsl(" + std::to_string(hue) + ",70%," + std::to_string(light) + "%)";
}

std::string rect(int x, int y, int w, int h, const std::string& fill, const std::string& extra) {
  return "<rect x=\"" + n(x) + "\" y=\"" + n(y) + "\" width=\"" + n(w) + "\" height=\"" + n(h) +
         "\" fill=\"" + fill + "\"" + (extra.empty() ? "" : " " + extra) + "/>";
}

std::string text(int x, int y, const std::string& t, int size, const std::string& extra) {
  return "<text x=\"" + n(x) + "\" y=\"" + n(y) + "\" font-size=\"" + n(size) +
         "\" text-anchor=\"middle\"" + (extra.empty() ? "" : " " + extra) + ">" + xml_text(t) +
         "</text>";
}

std::string text_left(int x, int y, const std::string& t, int size, const std::string& extra) {
  return "<text x=\"" + n(x) + "\" y=\"" + n(y) + "\" font-size=\"" + n(size) + "\"" +
         (extra.empty() ? "" : " " + extra) + ">" + xml_text(t) + "</text>";
}

std::string line(int x1, int y1, int x2, int y2, const std::string& stroke,
                 const std::string& extra) {
  return "<line x1=\"" + n(x1) + "\" y1=\"" + n(y1) + "\" x2=\"" + n(x2) + "\" y2=\"" + n(y2) +
         "\" stroke=\"" + stroke + "\"" + (extra.empty() ? "" : " " + extra) + "/>";
}

} // namespace tilegen::explain::svg
