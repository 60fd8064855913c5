// read_train_log: parse each line, keep the last line per step, collect the numeric keys. A bad
// line is only forgiven when nothing follows it, as in trajectory::read_trajectory_file.
#include "metrics/train_log.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "common/json_lines.hpp"

namespace kernelrl::metrics {

namespace fs = std::filesystem;
using common::Expected;
using common::make_error;
// Ordered, so that keys keep the order the trainer wrote them in (the charts and JSON follow it).
using json = nlohmann::ordered_json;

namespace {

// The step line at `where` ("FILE:LINE") as a TrainStep.
Expected<TrainStep> read_step(const json& j, const std::string& where) {
  if (!j.contains("step")) return make_error(where + ": missing field `step`");
  if (!j["step"].is_number_integer()) return make_error(where + ": field `step` is not an integer");
  TrainStep s;
  const auto step = j["step"].get<long long>();
  if (step < 0 || step > 1'000'000'000) {
    return make_error(where + ": field `step` is out of range (" + std::to_string(step) + ")");
  }
  s.step = static_cast<int>(step);
  for (const auto& [key, value] : j.items()) {
    if (key != "step" && value.is_number()) s.values[key] = value.get<double>();
  }
  return s;
}

}  // namespace

fs::path train_log_path(const fs::path& run_dir) { return run_dir / "train_log.jsonl"; }

std::optional<double> value_of(const TrainStep& step, const std::string& key) {
  auto it = step.values.find(key);
  return it == step.values.end() ? std::nullopt : std::optional<double>(it->second);
}

Expected<TrainLog> read_train_log(const fs::path& path) {
  TrainLog log;
  log.path = path;
  std::map<int, TrainStep> by_step;
  auto read = common::for_each_json_line<json>(path, "a training log", [&](const json& j, const std::string& where)
                                                                      -> common::Fallible {
    auto step = read_step(j, where);
    if (!step) return step.error();
    for (const auto& [key, value] : j.items()) {
      if (key != "step" && value.is_number() && std::find(log.keys.begin(), log.keys.end(), key) == log.keys.end()) {
        log.keys.push_back(key);
      }
    }
    if (by_step.count(step->step)) {
      log.warnings.push_back(where + ": repeats step " + std::to_string(step->step) + "; keeping this line");
    }
    by_step[step->step] = std::move(*step);
    return common::Ok{};
  }, log.warnings);
  if (!read) return read.error();
  for (auto& [number, step] : by_step) log.steps.push_back(std::move(step));
  return log;
}

}  // namespace kernelrl::metrics
