// A run directory: run.json (the configuration a resumed run must share, plus provenance),
// trajectories.jsonl, and the candidates the model wrote (candidates/<task_id>/t<trajectory>_turn<k>.<ext>).
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "rollout/rollout_config.hpp"

namespace kernelrl::rollout {

std::filesystem::path run_json_path(const std::filesystem::path& out_dir);
std::filesystem::path trajectories_path(const std::filesystem::path& out_dir);
std::filesystem::path candidate_path(const std::filesystem::path& out_dir, common::Format format,
                                     const std::string& task_id, int trajectory, int turn);

// run.json for `config` run with `policy` (policy::Policy::describe()) on `device`. Provenance keys
// (commit, started_at, concurrency) may differ on resume; every other key, the device included,
// must match.
nlohmann::json make_run_json(const RolloutConfig& config, const nlohmann::json& policy, const std::string& device);

// The first setting in which `stored` and `current` (both from make_run_json) differ, as an Error
// naming the field (`policy.temperature`) and both values; Ok when they agree.
common::Fallible check_same_settings(const nlohmann::json& stored, const nlohmann::json& current);

// Starts or reopens the run directory: writes run.json when there is none (creating the folder),
// else reads it and checks the settings match. Returns true when the run resumes. A folder with
// files but no run.json is refused, as is a run.json that cannot be read.
common::Expected<bool> open_run_dir(const std::filesystem::path& out_dir, const nlohmann::json& run_json);

}  // namespace kernelrl::rollout
