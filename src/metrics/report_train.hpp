// The report of a training run (`kernelrl train`'s run directory): its train_log.jsonl as a table
// of steps and a reward summary for the terminal, or as JSON; its train.json settings; and the
// rollout report of its last step (steps/step-NNNNN/, an ordinary rollout run directory).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "metrics/metrics.hpp"
#include "metrics/report_tables.hpp"
#include "metrics/train_log.hpp"

namespace kernelrl::metrics {

struct TrainReport {
  std::filesystem::path run_dir;
  TrainLog log;                                  // at least one step
  nlohmann::json settings;                       // train.json as read; null when absent or unreadable (a warning says why)
  std::vector<std::string> warnings;             // the log's, then train.json's and the last step's
  std::filesystem::path last_step_dir;           // run_dir/steps/step-NNNNN of the last logged step
  std::optional<Report> last_step_report;        // its rollout report; none when unreadable (a warning says why)
};

// reward/mean at the first, the last and the best step that logged it.
struct RewardSummary {
  int first_step = 0, last_step = 0, best_step = 0;
  double first = 0, last = 0, best = 0;
};

// How many table rows a long run shows at most (every step up to this many).
inline constexpr std::size_t default_max_step_rows = 40;

// The training run directory `path` names: `path` itself when it holds train_log.jsonl or
// train.json, its folder when `path` is a train_log.jsonl file; none for anything else (a rollout
// run directory or trajectories file). Does not read the files.
std::optional<std::filesystem::path> training_run_dir(const std::filesystem::path& path);

// "step-00012": the folder name the trainer gives step 12's rollout under steps/.
std::string step_dir_name(int step);

// Reads the run's log (an Error naming the file and line when malformed, or naming the file when it
// is missing or holds no step), then train.json and the last step's rollout, which only warn.
common::Expected<TrainReport> train_report_from_run(const std::filesystem::path& run_dir);

// Indices into n_steps steps that a table of at most max_rows (>= 2) rows shows: all of them when
// they fit, else evenly spaced ones from the first to the last, the last always included.
std::vector<std::size_t> shown_step_indices(std::size_t n_steps, std::size_t max_rows);

// Step, reward mean, correct rate, response tokens, degenerate share, clip fraction, approx KL,
// entropy, grad norm, rollout and update seconds; "-" where a step did not log the key.
CellTable train_step_table(const TrainLog& log, std::size_t max_rows = default_max_step_rows);

// None when no step logged reward/mean.
std::optional<RewardSummary> reward_summary(const TrainLog& log);

// The terminal report: header, step table, reward summary, the last step's rollout in one line.
// Warnings are not included (the CLI prints them to stderr).
std::string render_train_text(const TrainReport& report);

// {"schema": 1, "kind": "train", "source", "log", "warnings", "keys", "steps": [{"step", KEY: value}],
//  "reward": {first/last/best} or null, "settings", "last_step": {"step", "dir", "overall"}}.
// Every step is included (no thinning); integral values are written as integers.
nlohmann::json to_json(const TrainReport& report);

}  // namespace kernelrl::metrics
