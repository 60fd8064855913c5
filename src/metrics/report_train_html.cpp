// render_train_html: the shared page start (Chart.js inlined), figures for the step charts, the
// tables, and one generic script that draws every chart from the embedded JSON.
#include "metrics/report_train_html.hpp"

#include <algorithm>
#include <set>

#include "metrics/report_html.hpp"

namespace kernelrl::metrics {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Draws every chart of data.charts from data.steps (element #kernelrl-train-data).
constexpr const char* chart_script = R"js(
const train = JSON.parse(document.getElementById('kernelrl-train-data').textContent);
const colors = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];
const steps = train.steps.map(s => s.step);
for (const c of train.charts) {
  const keys = c.keys.map(k => [k, 'y']).concat(c.right_keys.map(k => [k, 'y1']));
  const datasets = keys.map(([k, axis], i) => ({
    label: k + (axis === 'y1' ? ' (right)' : ''), yAxisID: axis, spanGaps: true, pointRadius: steps.length > 60 ? 0 : 2,
    data: train.steps.map(s => (k in s ? s[k] : null)),
    borderColor: colors[i % colors.length], backgroundColor: colors[i % colors.length],
  }));
  const scales = {x: {title: {display: true, text: 'step'}},
                  y: {beginAtZero: true, title: {display: true, text: c.y_title}}};
  if (c.right_keys.length > 0) {
    scales.y1 = {position: 'right', beginAtZero: true, grid: {drawOnChartArea: false},
                 title: {display: true, text: c.y2_title}};
  }
  new Chart(document.getElementById(c.id), {type: 'line', data: {labels: steps, datasets},
    options: {animation: false, scales}});
}
)js";

json to_json(const StepChart& c) {
  return {{"id", c.id}, {"caption", c.caption}, {"y_title", c.y_title}, {"keys", c.keys},
          {"y2_title", c.y2_title}, {"right_keys", c.right_keys}};
}

// One row per setting; nested objects (train.json's rollout, policy, update) by dotted path.
void add_settings(const json& settings, const std::string& prefix, CellTable& table) {
  for (const auto& [key, value] : settings.items()) {
    if (value.is_object()) {
      add_settings(value, prefix + key + ".", table);
    } else {
      table.rows.push_back({prefix + key, value.is_string() ? value.get<std::string>() : value.dump()});
    }
  }
}

CellTable settings_table(const json& settings) {
  CellTable table{"Settings (train.json)", {"setting", "value"}, {}};
  add_settings(settings, "", table);
  return table;
}

// A link to the last step's report.html when it exists, relative to page_dir.
std::string last_step_link(const TrainReport& report, const fs::path& page_dir) {
  const fs::path page = report.last_step_dir / "report.html";
  std::error_code ec;
  if (!fs::exists(page, ec)) return "";
  fs::path href = fs::relative(page, page_dir.empty() ? report.run_dir : page_dir, ec);
  if (ec || href.empty()) href = fs::absolute(page, ec);
  return "<p><a href=\"" + escape_html(href.generic_string()) + "\">its full report (drill-down per task)</a></p>\n";
}

std::string last_step_section(const TrainReport& report, const fs::path& page_dir) {
  const int step = report.log.steps.back().step;
  std::string out = "<h2>Last step's rollout (step " + std::to_string(step) + ")</h2>\n<p>" +
                    escape_html(report.last_step_dir.string());
  if (!report.last_step_report) return out + ": not available (see the warnings above)</p>\n";
  const Report& last = *report.last_step_report;
  out += ": " + std::to_string(last.overall.n_tasks) + " tasks, " + std::to_string(last.overall.n_trajectories) +
         " trajectories. <code>kernelrl report " + escape_html(report.last_step_dir.string()) +
         "</code> writes its full report.</p>\n";
  out += last_step_link(report, page_dir);
  for (const auto& table : {summary_table(last), fast_p_table(last), task_table(last)}) out += html_table(table);
  return out;
}

}  // namespace

std::vector<StepChart> step_charts(const TrainLog& log) {
  std::vector<StepChart> charts = {
      {"chart-reward", "Reward per step: mean and max over the step's episodes (and the held-out mean)", "reward",
       {"reward/mean", "reward/max", "heldout/reward_mean"}, "", {}},
      {"chart-correct", "Fraction of the step's episodes with a correct kernel (and of the held-out turns)",
       "fraction correct", {"eval/correct_rate", "heldout/correct_rate"}, "", {}},
      {"chart-heldout", "Held-out tasks: correct at turn 1, trajectories with a correct turn, tasks solved",
       "fraction", {"heldout/turn1_correct_rate", "heldout/trajectory_correct_rate", "heldout/tasks_solved_frac"}, "", {}},
      {"chart-heldout-speed",
       "Held-out: mean speedup of correct kernels, mean best speedup per trajectory (incorrect: 0) (left), "
       "degenerate share (right)",
       "speedup", {"heldout/mean_speedup_correct", "heldout/mean_best_speedup"}, "fraction degenerate",
       {"heldout/degenerate_frac"}},
      {"chart-response", "Response length (mean tokens, left) and degenerate share (right)", "tokens",
       {"response/mean_tokens"}, "fraction degenerate", {"response/degenerate_frac"}},
      {"chart-policy", "Update diagnostics: clip fraction and approx KL (left), entropy (right)", "clip fraction / KL",
       {"train/clip_frac", "train/approx_kl"}, "entropy", {"train/entropy"}},
      {"chart-grad-norm", "Gradient norm (mean over the step's optimiser steps, before clipping)", "grad norm",
       {"train/grad_norm"}, "", {}},
      {"chart-loss", "Policy loss", "loss", {"train/loss"}, "", {}},
      {"chart-time", "Seconds per step: rollout, update and held-out evaluation", "seconds", {"time/rollout_s", "time/update_s", "time/heldout_s"}, "", {}},
  };
  const std::set<std::string> present(log.keys.begin(), log.keys.end());
  std::set<std::string> charted;
  auto keep_present = [&](std::vector<std::string>& keys) {
    std::erase_if(keys, [&](const std::string& k) { return !present.count(k); });
    charted.insert(keys.begin(), keys.end());
  };
  for (auto& c : charts) {
    keep_present(c.keys);
    keep_present(c.right_keys);
  }
  std::erase_if(charts, [](const StepChart& c) { return c.keys.empty() && c.right_keys.empty(); });
  int n_other = 0;
  for (const auto& key : log.keys) {
    if (charted.count(key)) continue;
    charts.push_back({"chart-other-" + std::to_string(++n_other), key, key, {key}, "", {}});
  }
  return charts;
}

std::string render_train_html(const TrainReport& report, const std::string& chart_js_source, const fs::path& page_dir) {
  const auto& steps = report.log.steps;
  std::string out = html_page_start("kernelrl training report: " + report.run_dir.string(), chart_js_source);
  out += "<h1>kernelrl training report</h1>\n<p>" + escape_html(report.run_dir.string()) + ": " +
         std::to_string(steps.size()) + " steps logged (steps " + std::to_string(steps.front().step) + ".." +
         std::to_string(steps.back().step) + ")</p>\n";
  if (!report.warnings.empty()) {
    out += "<ul class=\"warnings\">\n";
    for (const auto& w : report.warnings) out += "<li>" + escape_html(w) + "</li>\n";
    out += "</ul>\n";
  }
  const auto charts = step_charts(report.log);
  out += "<div class=\"charts\">\n";
  for (const auto& c : charts) out += html_figure(c.id, c.caption);
  out += "</div>\n";
  out += html_table(train_step_table(report.log));
  if (report.settings.is_object()) out += html_table(settings_table(report.settings));
  out += last_step_section(report, page_dir);
  json data = to_json(report);
  data["charts"] = json::array();
  for (const auto& c : charts) data["charts"].push_back(to_json(c));
  const std::string data_text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  out += "<script type=\"application/json\" id=\"kernelrl-train-data\">" + escape_script_end(data_text) +
         "</script>\n<script>" + chart_script + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace kernelrl::metrics
