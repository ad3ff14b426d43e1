#include "tune/TunePlan.h"

#include "support/Strings.h"
#include "support/TextEscape.h"
#include "tune/Candidates.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <ostream>
#include <sstream>

namespace tilegen::tune {

double geomean(const Candidate& c, const std::vector<size_t>& shapes) {
  double s = 0;
  for (size_t i : shapes)
    s += std::log(c.median_us.at(i));
  return std::exp(s / static_cast<double>(shapes.size()));
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace

bool parse_harness(const std::string& out, std::map<size_t, double>& medians, std::string& why) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string word, status;
    long shape = -1;
    if (!(ls >> word >> shape >> status) || word != "shape")
      continue;
    if (status != "ok") {
      why = line.substr(line.find(status));
      return false;
    }
    std::vector<double> t;
    double x;
    while (ls >> x)
      t.push_back(x > 1e-3 ? x : 1e-3); // a clock tick: keep the logarithm finite
    if (t.empty()) {
      why = "no times for shape " + std::to_string(shape);
      return false;
    }
    medians[static_cast<size_t>(shape)] = median(t);
  }
  return true;
}

std::string fixed(double v, int digits) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(digits);
  os << v;
  return os.str();
}

std::vector<size_t> class_members(const ClassPlan& cp) {
  std::vector<size_t> out = cp.ranked;
  for (size_t b : cp.baseline)
    if (std::find(out.begin(), out.end(), b) == out.end())
      out.push_back(b);
  return out;
}

std::vector<std::string> class_shape_names(const InstancePlan& ip, const ClassPlan& cp) {
  std::vector<std::string> shapes;
  for (size_t s : cp.shapes)
    shapes.push_back(ip.shape_names[s]);
  return shapes;
}

void print_tables(std::ostream& out, const std::vector<InstancePlan>& plans,
                  const std::vector<Candidate>& cands, const std::string& target) {
  for (const auto& ip : plans) {
    const ir::Kernel& k = *ip.kernel;
    for (const auto& cp : ip.classes) {
      const std::vector<std::string> shapes = class_shape_names(ip, cp);
      out << k.name << " " << ip.inst.name << " " << target << " class " << cp.name << " at "
          << join(shapes, "; ") << "\n";
      // the first baseline that ran: every time is also given as its speed relative to it
      std::optional<double> base;
      for (size_t b : cp.baseline)
        if (!base && cands[b].rejected.empty())
          base = geomean(cands[b], cp.shapes);
      out << "  rank  configuration                          time (us)  "
          << (base ? "vs base  " : "") << "status\n";
      const std::vector<size_t> members = class_members(cp);
      for (size_t r = 0; r < members.size(); ++r) {
        const Candidate& c = cands[members[r]];
        const bool is_base =
            std::find(cp.baseline.begin(), cp.baseline.end(), members[r]) != cp.baseline.end();
        std::string cfg = config_string(k, c.values);
        std::string rank = r < cp.ranked.size() ? std::to_string(r + 1) : "base";
        std::string time = c.rejected.empty() ? fixed(geomean(c, cp.shapes), 2) : "-";
        std::string ratio =
            base && c.rejected.empty() ? fixed(*base / geomean(c, cp.shapes), 3) + "x" : "-";
        std::string status = !c.rejected.empty()
                                 ? "rejected: " + c.rejected.substr(0, c.rejected.find('\n'))
                             : cp.chosen && *cp.chosen == members[r] ? "chosen"
                                                                     : "ok";
        if (is_base)
          status += " (baseline)";
        rank.resize(std::max<size_t>(6, rank.size() + 1), ' ');
        cfg.resize(std::max<size_t>(39, cfg.size() + 1), ' ');
        time.insert(0, time.size() < 9 ? 9 - time.size() : 0, ' ');
        ratio.insert(0, ratio.size() < 7 ? 7 - ratio.size() : 0, ' ');
        out << "  " << rank << cfg << time << "  " << (base ? ratio + "  " : "") << status
            << "\n";
      }
      out << "  -> " << (cp.chosen ? config_string(k, cands[*cp.chosen].values) : "none") << ": "
          << cp.why << "\n";
    }
  }
}

std::string report_json(const std::vector<InstancePlan>& plans,
                        const std::vector<Candidate>& cands, const std::string& target, int runs,
                        int warmup, double margin) {
  std::string report = "{\n  \"target\": " + json_string(target) + ",\n  \"runs\": " +
                       std::to_string(runs) + ",\n  \"warmup\": " + std::to_string(warmup) +
                       ",\n  \"margin_percent\": " + fixed(margin, 2) + ",\n  \"classes\": [";
  bool first_class = true;
  for (const auto& ip : plans) {
    const ir::Kernel& k = *ip.kernel;
    for (const auto& cp : ip.classes) {
      report += std::string(first_class ? "\n" : ",\n") + "    {\"kernel\": " +
                json_string(k.name) + ", \"instance\": " + json_string(ip.inst.name) +
                ", \"class\": " + json_string(cp.name) + ", \"shapes\": [";
      for (size_t i = 0; i < cp.shapes.size(); ++i)
        report += (i ? ", " : "") + json_string(ip.shape_names[cp.shapes[i]]);
      report += "],\n     \"chosen\": " +
                (cp.chosen ? json_string(config_string(k, cands[*cp.chosen].values))
                           : std::string("null")) +
                ", \"rule\": " + json_string(cp.why) + ",\n     \"candidates\": [";
      first_class = false;
      const std::vector<size_t> members = class_members(cp);
      for (size_t r = 0; r < members.size(); ++r) {
        const Candidate& c = cands[members[r]];
        const bool is_base =
            std::find(cp.baseline.begin(), cp.baseline.end(), members[r]) != cp.baseline.end();
        report += std::string(r ? ",\n" : "\n") + "       {\"rank\": " +
                  (r < cp.ranked.size() ? std::to_string(r + 1) : std::string("null")) +
                  (is_base ? ", \"baseline\": true" : "") +
                  ", \"config\": " + json_string(config_string(k, c.values)) +
                  ", \"status\": " + json_string(c.rejected.empty() ? "ok" : "rejected");
        if (!c.rejected.empty()) {
          report += ", \"reason\": " + json_string(c.rejected);
        } else {
          report += ", \"median_us\": {";
          for (size_t i = 0; i < cp.shapes.size(); ++i)
            report += (i ? ", " : "") + json_string(ip.shape_names[cp.shapes[i]]) + ": " +
                      fixed(c.median_us.at(cp.shapes[i]), 3);
          report += "}";
          if (cp.confirm_us.count(members[r]))
            report += ", \"confirm_geomean_us\": " + fixed(cp.confirm_us.at(members[r]), 3);
        }
        report += "}";
      }
      report += "\n     ]}";
    }
  }
  return report + "\n  ]\n}\n";
}

} // namespace tilegen::tune
