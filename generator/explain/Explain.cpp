// The page of tilegen explain: the header, the configuration and ranking beside the pictures
// (an aside), and the sections of ExplainLayouts.cpp and ExplainPipeline.cpp, printed as HTML
// or as one SVG. Nothing in the output depends on pointers, time or the environment.
#include "explain/Explain.h"

#include "explain/Svg.h"
#include "support/TextEscape.h"

#include <algorithm>
#include <cstdio>

namespace tilegen::explain {

namespace {

std::string s(int64_t v) { return std::to_string(v); }

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

Section config_section(const ExplainInput& in) {
  Section sec;
  sec.id = "config";
  sec.title = "Chosen configuration";
  const ir::Kernel& k = *in.kernel;
  std::string tiles;
  for (const auto& tc : k.tile_consts) {
    auto it = k.bindings.find(tc.var->name);
    if (it != k.bindings.end())
      tiles += (tiles.empty() ? "" : " ") + tc.var->name + "=" + s(it->second);
  }
  sec.lines.push_back(tiles.empty() ? "No tile constants." : tiles);
  for (const auto& [name, v] : k.bindings) {
    bool tile = false;
    for (const auto& tc : k.tile_consts)
      tile |= tc.var->name == name;
    if (!tile)
      sec.lines.push_back("instance value " + name + "=" + s(v));
  }
  for (const auto& n : k.notes)
    sec.lines.push_back(n);
  if (!k.shape_classes.empty())
    sec.lines.push_back("The pictures show the variant of the class \"large\" (every shape no "
                        "declared class takes); the other classes' choices are ranked below.");
  return sec;
}

// One table per shape class: the eligible configurations, best first (at most 8), the row of
// the class's choice highlighted.
std::vector<Section> ranking_sections(const ExplainInput& in) {
  std::vector<Section> out;
  const Target& t = *in.target;
  if (!in.rec) {
    Section sec;
    sec.id = "ranking";
    sec.title = "Recommender ranking";
    sec.lines.push_back(
        "Target " + t.name + " (" + backend_name(t.backend) + " backend" +
        ") has no tile recommender: its schedule takes the largest-footprint configuration "
        "that fits (docs/spec.md), so there is no ranking to show.");
    out.push_back(std::move(sec));
    return out;
  }
  const passes::Recommendation& r = *in.rec;
  const ir::Kernel& k = *in.kernel;
  std::vector<int64_t> chosen;
  for (const auto& name : r.const_names) {
    auto it = k.bindings.find(name);
    chosen.push_back(it == k.bindings.end() ? -1 : it->second);
  }
  // "large" first: it is the variant the pictures show.
  std::vector<const passes::ClassChoice*> order;
  for (const auto& c : r.classes)
    if (c.shape.name == passes::kLargeClass)
      order.push_back(&c);
  for (const auto& c : r.classes)
    if (c.shape.name != passes::kLargeClass)
      order.push_back(&c);
  for (const passes::ClassChoice* cp : order) {
    const passes::ClassChoice& c = *cp;
    Section sec;
    sec.id = "ranking-" + c.shape.name;
    sec.title = "Ranking, class " + c.shape.name;
    sec.lines.push_back((c.shape.text.empty() ? std::string("every other shape")
                                              : "when " + c.shape.text) +
                        "; modelled at " + c.shape.shape_str() + ". " + s(int64_t(c.ranked.size())) +
                        " eligible configurations (" + s(int64_t(r.eligible)) + " of " +
                        s(int64_t(r.total)) + " in all).");
    sec.table.push_back({"#", "configuration", "est. us", "bound", "blocks/SM", "waves", "smem B",
                         "regs"});
    bool is_large = c.shape.name == passes::kLargeClass;
    size_t shown = 0;
    for (size_t i = 0; i < c.ranked.size(); ++i) {
      const auto& [idx, mn] = c.ranked[i];
      const passes::ConfigEval& e = r.configs[idx];
      bool mark = is_large ? e.values == chosen : i == 0;
      if (i >= 8 && !mark)
        continue;
      std::string rank = (mark ? "*" : "") + s(int64_t(i + 1));
      sec.table.push_back({rank, r.config_str(idx), fixed(mn.time_us, 1), mn.bound,
                           s(mn.blocks_per_sm) + " (" + mn.occupancy_limit + ")",
                           s(mn.waves) + " at " + s(int64_t(mn.wave_eff * 100 + 0.5)) + "%",
                           s(e.use.smem_bytes), s(e.use.registers)});
      ++shown;
    }
    if (c.ranked.size() > shown)
      sec.lines.push_back("Showing the best 8 (and the choice); `tilegen dump --stage=recommend` "
                          "prints them all.");
    out.push_back(std::move(sec));
  }
  return out;
}

// ---- HTML ---------------------------------------------------------------------------------------

const char* kCss = R"(body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1b1b1b;background:#fafafa}
header{background:#1f3a5f;color:#fff;padding:14px 24px}
header h1{margin:0 0 4px 0;font-size:22px}
header p{margin:2px 0;font-size:13px;opacity:.9}
nav{padding:8px 24px;font-size:13px;background:#e8eef5}
nav a{margin-right:14px;color:#1f3a5f}
.page{display:flex;align-items:flex-start;gap:24px;padding:16px 24px}
main{flex:1 1 auto;min-width:0}
aside{order:2;flex:0 0 560px;position:sticky;top:8px;max-height:96vh;overflow:auto;background:#fff;border:1px solid #ccd;border-radius:6px;padding:10px 14px}
section{background:#fff;border:1px solid #dde;border-radius:6px;padding:10px 16px;margin-bottom:18px}
h2{font-size:17px;margin:4px 0 8px 0;color:#1f3a5f}
p{font-size:13px;margin:4px 0;line-height:1.4}
.pic{overflow:auto;margin:8px 0}
table{border-collapse:collapse;font-size:12px;margin:6px 0}
th,td{border:1px solid #ccd;padding:2px 6px;text-align:left;white-space:nowrap}
th{background:#eef}
tr.chosen td{background:#ffe9a8;font-weight:600}
svg text{font-family:ui-monospace,Menlo,Consolas,monospace}
)";

std::string html_section(const Section& sec) {
  std::string o = "<section id=\"" + xml_text(sec.id) + "\">\n<h2>" + xml_text(sec.title) +
                  "</h2>\n";
  for (const auto& l : sec.lines)
    o += "<p>" + xml_text(l) + "</p>\n";
  if (!sec.table.empty()) {
    o += "<table>\n";
    for (size_t r = 0; r < sec.table.size(); ++r) {
      const auto& row = sec.table[r];
      bool chosen = r > 0 && !row.empty() && !row[0].empty() && row[0][0] == '*';
      o += chosen ? "<tr class=\"chosen\">" : "<tr>";
      for (size_t c = 0; c < row.size(); ++c) {
        std::string cell = c == 0 && chosen ? row[c].substr(1) : row[c];
        o += (r == 0 ? "<th>" : "<td>") + xml_text(cell) + (r == 0 ? "</th>" : "</td>");
      }
      o += "</tr>\n";
    }
    o += "</table>\n";
  }
  for (const auto& p : sec.pictures)
    o += "<div class=\"pic\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + s(p.width) +
         "\" height=\"" + s(p.height) + "\" viewBox=\"0 0 " + s(p.width) + " " + s(p.height) +
         "\" " + p.attrs + ">\n" + p.svg + "</svg></div>\n";
  return o + "</section>\n";
}

std::string title_of(const ExplainInput& in) {
  return in.kernel->name + " " + in.instance + " on " + in.target->name;
}

std::string render_html(const ExplainInput& in, const std::vector<Section>& side,
                        const std::vector<Section>& body) {
  std::string o = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                  "style-src 'unsafe-inline'\">\n<title>tilegen explain: " +
                  xml_text(title_of(in)) + "</title>\n<style>\n" + kCss +
                  "</style>\n</head>\n<body>\n<header>\n<h1>" + xml_text(title_of(in)) +
                  "</h1>\n<p>" + xml_text(in.kernel->summary) + "</p>\n<p>spec " +
                  xml_text(in.spec_path) + " &#183; target " + xml_text(in.target->name) + " (" +
                  xml_text(in.target->summary) + ") &#183; instance " + xml_text(in.instance) +
                  "</p>\n</header>\n<nav>";
  for (const auto& sec : body)
    o += "<a href=\"#" + xml_text(sec.id) + "\">" + xml_text(sec.title) + "</a>";
  // The aside comes first in the source (the configuration before the pictures of it) and
  // shows on the right (CSS order).
  o += "</nav>\n<div class=\"page\">\n<aside>\n";
  for (const auto& sec : side)
    o += html_section(sec);
  o += "</aside>\n<main>\n";
  for (const auto& sec : body)
    o += html_section(sec);
  o += "</main>\n</div>\n<footer><p style=\"padding:0 24px\">Generated by tilegen explain "
       "(docs/explain.md).</p></footer>\n</body>\n</html>\n";
  return o;
}

// ---- SVG ----------------------------------------------------------------------------------------

std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> out;
  std::string cur;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos)
      end = text.size();
    std::string word = text.substr(start, end - start);
    if (!cur.empty() && cur.size() + 1 + word.size() > width) {
      out.push_back(cur);
      cur.clear();
    }
    cur += (cur.empty() ? "" : " ") + word;
    start = end + 1;
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}

std::string render_svg(const ExplainInput& in, const std::vector<Section>& side,
                       const std::vector<Section>& body) {
  std::string o;
  int y = 30, width = 1000;
  o += svg::text_left(16, y, "tilegen explain: " + title_of(in), 18, "font-weight=\"bold\"") + "\n";
  y += 20;
  o += svg::text_left(16, y, in.kernel->summary, 12) + "\n";
  y += 16;
  o += svg::text_left(16, y, "spec " + in.spec_path + " · target " + in.target->name, 12) + "\n";
  y += 16;
  std::vector<const Section*> all;
  for (const auto& sec : side)
    all.push_back(&sec);
  for (const auto& sec : body)
    all.push_back(&sec);
  for (const Section* sec : all) {
    y += 22;
    o += "<g class=\"section\" id=\"" + xml_text(sec->id) + "\">\n";
    o += svg::text_left(16, y, sec->title, 15, "font-weight=\"bold\" fill=\"#1f3a5f\"") + "\n";
    y += 6;
    for (const auto& l : sec->lines)
      for (const auto& piece : wrap(l, 150)) {
        y += 15;
        o += svg::text_left(16, y, piece, 11) + "\n";
      }
    for (size_t r = 0; r < sec->table.size(); ++r) {
      const auto& row = sec->table[r];
      bool chosen = r > 0 && !row.empty() && !row[0].empty() && row[0][0] == '*';
      std::string line;
      for (size_t c = 0; c < row.size(); ++c) {
        std::string cell = c == 0 && chosen ? row[c].substr(1) : row[c];
        size_t w = c == 1 ? 48 : c == 0 ? 4 : 14;
        if (cell.size() < w)
          cell.resize(w, ' ');
        line += cell + " ";
      }
      y += 15;
      if (chosen)
        o += svg::rect(12, y - 11, 980, 14, "#ffe9a8", "class=\"chosen\"");
      o += svg::text_left(16, y, line, 11,
                          "xml:space=\"preserve\" font-family=\"ui-monospace,Menlo,Consolas,monospace\"") +
           "\n";
    }
    for (const auto& p : sec->pictures) {
      y += 10;
      o += "<svg x=\"16\" y=\"" + s(y) + "\" width=\"" + s(p.width) + "\" height=\"" +
           s(p.height) + "\" " + p.attrs + ">\n" + p.svg + "</svg>\n";
      y += p.height;
      width = std::max(width, p.width + 32);
    }
    o += "</g>\n";
  }
  y += 20;
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
         "width=\"" + s(width) + "\" height=\"" + s(y) + "\" viewBox=\"0 0 " + s(width) + " " +
         s(y) + "\">\n" + svg::rect(0, 0, width, y, "#ffffff") + "\n" + o + "</svg>\n";
}

} // namespace

std::string render(const ExplainInput& in, Format format) {
  std::vector<Section> side;
  side.push_back(config_section(in));
  for (auto& sec : ranking_sections(in))
    side.push_back(std::move(sec));
  std::vector<Section> body;
  for (auto& sec : layout_sections(in))
    body.push_back(std::move(sec));
  for (auto& sec : swizzle_sections(in))
    body.push_back(std::move(sec));
  body.push_back(pipeline_section(in));
  return format == Format::Html ? render_html(in, side, body) : render_svg(in, side, body);
}

} // namespace tilegen::explain
