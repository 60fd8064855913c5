// Training report: read the log, the settings and the last step's rollout; thin long runs to a
// readable table; summarise reward. Only the log is required; the rest degrades to warnings.
#include "metrics/report_train.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/fs.hpp"
#include "common/table.hpp"
#include "metrics/report_json.hpp"

namespace kernelrl::metrics {

namespace fs = std::filesystem;
using common::Expected;
using common::make_error;
using nlohmann::json;

namespace {

std::string format_with(const char* printf_format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, printf_format, value);
  return buf;
}

// A column of the step table: which log key it shows and how.
struct StepColumn {
  const char* header;
  const char* key;
  std::string (*format)(double);
  bool only_when_logged = false;  // a column of an optional feature (held-out evaluation): shown when its key is
};

const std::vector<StepColumn>& step_columns() {
  static const std::vector<StepColumn> columns = {
      {"reward", "reward/mean", [](double v) { return format_with("%.3f", v); }},
      {"correct", "eval/correct_rate", format_percent},
      {"held-out", "heldout/correct_rate", format_percent, true},
      {"tokens", "response/mean_tokens", [](double v) { return format_with("%.0f", v); }},
      {"degenerate", "response/degenerate_frac", format_percent},
      {"clip", "train/clip_frac", [](double v) { return format_with("%.3f", v); }},
      {"approx_kl", "train/approx_kl", [](double v) { return format_with("%.3g", v); }},
      {"entropy", "train/entropy", [](double v) { return format_with("%.3f", v); }},
      {"grad_norm", "train/grad_norm", [](double v) { return format_with("%.3g", v); }},
      {"rollout_s", "time/rollout_s", [](double v) { return format_with("%.1f", v); }},
      {"update_s", "time/update_s", [](double v) { return format_with("%.1f", v); }},
  };
  return columns;
}

// train.json as a JSON value, or null with a warning naming the file.
json read_settings(const fs::path& run_dir, std::vector<std::string>& warnings) {
  const fs::path file = run_dir / "train.json";
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    warnings.push_back(file.string() + ": no such file; the run's settings are not shown");
    return nullptr;
  }
  auto text = common::read_file(file);
  if (!text) {
    warnings.push_back(text.error().message + "; the run's settings are not shown");
    return nullptr;
  }
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    warnings.push_back(file.string() + ": not a JSON object; the run's settings are not shown");
    return nullptr;
  }
  return j;
}

// A number as JSON: integral values (counts, the step) as integers, others as they are.
json number_json(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e15) return static_cast<long long>(v);
  return v;
}

std::string signed_fixed(double v) { return (v >= 0 ? "+" : "") + format_with("%.3f", v); }

}  // namespace

std::optional<fs::path> training_run_dir(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(train_log_path(path), ec) || fs::exists(path / "train.json", ec)) return path;
    return std::nullopt;
  }
  if (path.filename() == "train_log.jsonl" && fs::is_regular_file(path, ec)) {
    return path.has_parent_path() ? path.parent_path() : fs::path(".");
  }
  return std::nullopt;
}

std::string step_dir_name(int step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step-%05d", step);
  return buf;
}

Expected<TrainReport> train_report_from_run(const fs::path& run_dir) {
  const fs::path log_file = train_log_path(run_dir);
  auto log = read_train_log(log_file);
  if (!log) {
    std::error_code ec;
    if (!fs::exists(log_file, ec)) return make_error(log.error().message + " (no training step has finished yet?)");
    return log.error();
  }
  if (log->steps.empty()) {
    return make_error(log_file.string() + ": holds no step records (no training step has finished yet?)");
  }
  TrainReport report;
  report.run_dir = run_dir;
  report.log = std::move(*log);
  report.warnings = report.log.warnings;
  report.settings = read_settings(run_dir, report.warnings);
  report.last_step_dir = run_dir / "steps" / step_dir_name(report.log.steps.back().step);
  std::error_code ec;
  if (!fs::is_directory(report.last_step_dir, ec)) {
    report.warnings.push_back(report.last_step_dir.string() + ": no such folder; the last step's rollout is not shown");
    return report;
  }
  auto last = report_from_run(report.last_step_dir);
  if (last) {
    for (const auto& w : last->warnings) report.warnings.push_back("the last step's rollout: " + w);
    report.last_step_report = std::move(*last);
  } else {
    report.warnings.push_back("the last step's rollout is not shown: " + last.error().message);
  }
  return report;
}

std::vector<std::size_t> shown_step_indices(std::size_t n_steps, std::size_t max_rows) {
  std::vector<std::size_t> shown;
  if (n_steps <= max_rows || max_rows < 2) {
    for (std::size_t i = 0; i < n_steps; ++i) shown.push_back(i);
    return shown;
  }
  // Row r of max_rows shows step index round(r * (n - 1) / (max_rows - 1)): first and last exact.
  for (std::size_t r = 0; r < max_rows; ++r) {
    const std::size_t i = (r * (n_steps - 1) * 2 + (max_rows - 1)) / ((max_rows - 1) * 2);
    if (shown.empty() || shown.back() != i) shown.push_back(i);
  }
  return shown;
}

CellTable train_step_table(const TrainLog& log, std::size_t max_rows) {
  const auto shown = shown_step_indices(log.steps.size(), max_rows);
  CellTable table{"Training steps", {"step"}, {}};
  if (shown.size() < log.steps.size()) {
    table.title += " (" + std::to_string(shown.size()) + " of " + std::to_string(log.steps.size()) +
                   ", evenly spaced, the last included)";
  }
  std::vector<StepColumn> columns;
  for (const auto& c : step_columns()) {
    if (!c.only_when_logged || std::find(log.keys.begin(), log.keys.end(), c.key) != log.keys.end()) columns.push_back(c);
  }
  for (const auto& c : columns) table.headers.push_back(c.header);
  for (std::size_t i : shown) {
    const TrainStep& s = log.steps[i];
    std::vector<std::string> row{std::to_string(s.step)};
    for (const auto& c : columns) {
      auto v = value_of(s, c.key);
      row.push_back(v ? c.format(*v) : "-");
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

std::optional<RewardSummary> reward_summary(const TrainLog& log) {
  std::optional<RewardSummary> summary;
  for (const auto& s : log.steps) {
    auto v = value_of(s, "reward/mean");
    if (!v) continue;
    if (!summary) summary = RewardSummary{s.step, s.step, s.step, *v, *v, *v};
    summary->last_step = s.step;
    summary->last = *v;
    if (*v > summary->best) {
      summary->best_step = s.step;
      summary->best = *v;
    }
  }
  return summary;
}

std::string render_train_text(const TrainReport& report) {
  const auto& steps = report.log.steps;
  std::string out = "kernelrl training report: " + report.run_dir.string() + "\n" + std::to_string(steps.size()) +
                    " steps logged (steps " + std::to_string(steps.front().step) + ".." +
                    std::to_string(steps.back().step) + ")\n\n";
  const CellTable cells = train_step_table(report.log);
  common::Table table(cells.headers);
  for (const auto& row : cells.rows) table.add_row(row);
  out += cells.title + "\n" + table.render() + "\n";
  if (auto r = reward_summary(report.log)) {
    out += "reward/mean: " + format_with("%.3f", r->first) + " at step " + std::to_string(r->first_step) + " -> " +
           format_with("%.3f", r->last) + " at step " + std::to_string(r->last_step) + " (" +
           signed_fixed(r->last - r->first) + "); best " + format_with("%.3f", r->best) + " at step " +
           std::to_string(r->best_step) + "\n";
  } else {
    out += "reward/mean: not logged\n";
  }
  if (const auto& last = report.last_step_report) {
    out += "last step's rollout (" + report.last_step_dir.string() + "): " + std::to_string(last->overall.n_tasks) +
           " tasks, " + std::to_string(last->overall.n_trajectories) + " trajectories, correct " +
           format_percent(last->overall.correctness) + ", solved " + format_percent(last->overall.solved_rate) +
           " (`kernelrl report " + report.last_step_dir.string() + "` for its tables)\n";
  }
  return out;
}

json to_json(const TrainReport& report) {
  json steps = json::array();
  for (const auto& s : report.log.steps) {
    json row = {{"step", s.step}};
    for (const auto& [key, value] : s.values) row[key] = number_json(value);
    steps.push_back(std::move(row));
  }
  json reward = nullptr;
  if (auto r = reward_summary(report.log)) {
    reward = {{"first_step", r->first_step}, {"first", r->first}, {"last_step", r->last_step},
              {"last", r->last},             {"best_step", r->best_step}, {"best", r->best}};
  }
  json last_step = {{"step", report.log.steps.back().step},
                    {"dir", report.last_step_dir.string()},
                    {"overall", report.last_step_report ? to_json(report.last_step_report->overall) : json(nullptr)}};
  return {{"schema", 1},
          {"kind", "train"},
          {"source", report.run_dir.string()},
          {"log", report.log.path.string()},
          {"warnings", report.warnings},
          {"keys", report.log.keys},
          {"steps", steps},
          {"reward", reward},
          {"settings", report.settings},
          {"last_step", last_step}};
}

}  // namespace kernelrl::metrics
