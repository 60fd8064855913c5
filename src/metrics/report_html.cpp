// render_html: static page parts around the inlined Chart.js and the embedded JSON. Both sit in
// <script> elements, so any "</" inside them is escaped to keep the element from closing early.
#include "metrics/report_html.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "common/format.hpp"
#include "common/fs.hpp"
#include "metrics/report_json.hpp"
#include "metrics/report_tables.hpp"

namespace kernelrl::metrics {

using common::format_fixed;

namespace {

constexpr const char* page_style = R"css(
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr)); gap: 1.5em; }
figure { margin: 0; } figcaption { font-size: 0.85em; color: #555; }
.warnings { color: #a40; }
details { margin: 0.3em 0; } summary { cursor: pointer; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; font-size: 0.85em; text-align: left; }
td.feedback { text-align: left; max-width: 60em; }
)css";

// Draws the charts from the embedded report JSON (element #kernelrl-report-data).
constexpr const char* chart_script = R"js(
const report = JSON.parse(document.getElementById('kernelrl-report-data').textContent);
const groups = [report.overall].concat(report.levels.length > 1 ? report.levels : []);
const colors = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];
function lineChart(id, pointsOf, xTitle, yTitle) {
  const xs = [...new Set(groups.flatMap(g => pointsOf(g).map(p => p.x)))].sort((a, b) => a - b);
  const datasets = groups.map((g, i) => ({
    label: g.name,
    data: xs.map(x => { const p = pointsOf(g).find(q => q.x === x); return p ? p.y : null; }),
    borderColor: colors[i % colors.length], backgroundColor: colors[i % colors.length], spanGaps: true,
  }));
  new Chart(document.getElementById(id), {type: 'line', data: {labels: xs, datasets},
    options: {animation: false, scales: {x: {title: {display: true, text: xTitle}},
                                         y: {beginAtZero: true, title: {display: true, text: yTitle}}}}});
}
lineChart('chart-correct-by-turn', g => g.by_turn.map(p => ({x: p.turn, y: p.correctness})), 'turn', 'fraction correct');
lineChart('chart-speedup-by-turn', g => g.by_turn.map(p => ({x: p.turn, y: p.mean_best_speedup})), 'turn', 'mean best speedup');
lineChart('chart-pass-at-k', g => g.pass_at_k.map(p => ({x: p.k, y: p.value})), 'k', 'pass@k');
lineChart('chart-best-at-k', g => g.best_at_k.map(p => ({x: p.k, y: p.value})), 'k', 'best@k speedup');
const fastDatasets = groups.map((g, i) => ({label: g.name + ' (best of all)', data: g.fast_p.map(f => f.at_best),
                                            backgroundColor: colors[i % colors.length]}));
fastDatasets.push({label: 'overall (one trajectory)', data: report.overall.fast_p.map(f => f.at_1), backgroundColor: '#bbb'});
new Chart(document.getElementById('chart-fast-p'), {type: 'bar',
  data: {labels: report.overall.fast_p.map(f => 'fast_' + f.p), datasets: fastDatasets},
  options: {animation: false, scales: {y: {beginAtZero: true, max: 1, title: {display: true, text: 'fraction of tasks'}}}}});
)js";

// Per task, per trajectory: every turn's status, score, speedup, feedback and code (folded).
std::string drill_down(const std::vector<TurnRecord>& turns) {
  std::map<std::string, std::map<int, std::vector<const TurnRecord*>>> by_task;
  for (const auto& t : turns) by_task[t.task][t.trajectory].push_back(&t);
  std::string out = "<h2>Trajectories</h2>\n";
  for (auto& [task, trajectories] : by_task) {
    out += "<details><summary>" + escape_html(task) + " (" + std::to_string(trajectories.size()) +
           " trajectories)</summary>\n";
    for (auto& [index, list] : trajectories) {
      std::sort(list.begin(), list.end(), [](const TurnRecord* a, const TurnRecord* b) { return a->turn < b->turn; });
      out += "<details><summary>trajectory " + std::to_string(index) + "</summary>\n<table>\n"
             "<tr><th>turn</th><th>status</th><th>score</th><th>speedup</th><th>feedback</th></tr>\n";
      for (const TurnRecord* t : list) {
        out += "<tr><td>" + std::to_string(t->turn) + "</td><td>" + escape_html(t->status()) + "</td><td>" +
               format_fixed(t->score, 3) + "</td><td>" + (t->speedup ? format_fixed(*t->speedup, 2) + "x" : "-") +
               "</td><td class=\"feedback\">" + escape_html(t->feedback()) + "</td></tr>\n";
        if (t->code && !t->code->empty()) {
          out += "<tr><td></td><td colspan=\"4\"><details><summary>code, turn " + std::to_string(t->turn) +
                 "</summary><pre>" + escape_html(*t->code) + "</pre></details></td></tr>\n";
        }
      }
      out += "</table></details>\n";
    }
    out += "</details>\n";
  }
  return out;
}

}  // namespace

std::string escape_script_end(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') out += '\\';
  }
  return out;
}

std::string html_table(const CellTable& cells) {
  std::string out = "<h2>" + escape_html(cells.title) + "</h2>\n<table>\n<tr>";
  for (const auto& h : cells.headers) out += "<th>" + escape_html(h) + "</th>";
  out += "</tr>\n";
  for (const auto& row : cells.rows) {
    out += "<tr>";
    for (const auto& cell : row) out += "<td>" + escape_html(cell) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string html_figure(const std::string& id, const std::string& caption) {
  return "<figure><canvas id=\"" + id + "\"></canvas><figcaption>" + escape_html(caption) + "</figcaption></figure>\n";
}

std::string html_page_start(const std::string& title, const std::string& chart_js_source) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + escape_html(title) +
         "</title>\n<style>" + page_style + "</style>\n<script>\n" + escape_script_end(chart_js_source) +
         "\n</script>\n</head>\n<body>\n";
}

common::Expected<std::string> load_chart_js(const std::filesystem::path& path) {
  auto source = common::read_file(path);
  if (!source) {
    return common::make_error("Chart.js for the HTML report: " + source.error().message +
                              " (install Debian's libjs-chart.js, or pass --chart-js FILE)");
  }
  return source;
}

std::string escape_html(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string render_html(const Report& report, const std::string& chart_js_source) {
  std::string out = html_page_start("kernelrl report: " + report.source, chart_js_source);
  out += "<h1>kernelrl report</h1>\n<p>" + escape_html(report.source) + ": " + std::to_string(report.overall.n_tasks) +
         " tasks, " + std::to_string(report.overall.n_trajectories) + " trajectories</p>\n";
  if (!report.warnings.empty()) {
    out += "<ul class=\"warnings\">\n";
    for (const auto& w : report.warnings) out += "<li>" + escape_html(w) + "</li>\n";
    out += "</ul>\n";
  }
  out += html_table(summary_table(report));
  out += "<div class=\"charts\">\n";
  out += html_figure("chart-correct-by-turn", "Serial scaling: fraction of trajectories correct using turns 1..t");
  out += html_figure("chart-speedup-by-turn", "Serial scaling: mean best speedup using turns 1..t (incorrect = 0)");
  out += html_figure("chart-pass-at-k", "Parallel scaling: pass@k (unbiased estimator)");
  out += html_figure("chart-best-at-k", "Parallel scaling: best@k, expected best speedup of k trajectories");
  out += html_figure("chart-fast-p", "fast_p: fraction of tasks correct with speedup > p");
  out += "</div>\n";
  out += html_table(fast_p_table(report));
  out += html_table(task_table(report));
  if (!report.turns.empty()) out += drill_down(report.turns);
  out += "<script type=\"application/json\" id=\"kernelrl-report-data\">" + escape_script_end(to_json(report).dump()) +
         "</script>\n<script>" + chart_script + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace kernelrl::metrics
