#include "train/episodes.hpp"

#include <map>

#include <nlohmann/json.hpp>

#include "common/json_lines.hpp"

namespace kernelrl::train {

namespace {

using nlohmann::json;

common::Expected<Episode> episode_from(const json& j) {
  Episode e;
  e.task = j.at("task").get<std::string>();
  e.trajectory = j.at("trajectory").get<int>();
  e.turn = j.at("turn").get<int>();
  for (const auto& m : j.at("messages")) e.messages.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
  const json& response = j.at("response");
  if (response.is_object()) {
    if (response.contains("tokens") && response["tokens"].is_array()) {
      e.response_ids = response["tokens"].get<std::vector<std::int64_t>>();
    }
    if (response.contains("logprobs") && response["logprobs"].is_array()) {
      e.response_logprobs = response["logprobs"].get<std::vector<double>>();
    }
    e.truncated = response.value("finish_reason", "") == "length";
  }
  if (j.contains("advantage") && j["advantage"].is_number()) e.advantage = j["advantage"].get<double>();
  e.score = j.value("score", 0.0);
  e.correct = j.value("correct", false);
  if (j.contains("speedup") && j["speedup"].is_number()) e.speedup = j["speedup"].get<double>();
  if (j.contains("prompt_error") && !j["prompt_error"].is_null()) {
    e.status = "PROMPT_TOO_LONG";
  } else if (j.contains("policy_error") && !j["policy_error"].is_null()) {
    e.status = "POLICY_ERROR";
  } else if (j.contains("parse_error") && !j["parse_error"].is_null()) {
    e.status = "PARSE_ERROR";
  } else if (j.contains("result") && j["result"].is_object()) {
    e.status = j["result"].value("status", "");
  }
  return e;
}

}  // namespace

common::Expected<std::vector<Episode>> read_episodes(const std::filesystem::path& run_dir) {
  std::vector<Episode> episodes;
  std::map<std::tuple<std::string, int, int>, std::size_t> index;
  std::vector<std::string> warnings;  // a last line cut short by a kill: the runner redoes that turn
  auto read = common::for_each_json_line<json>(run_dir / "trajectories.jsonl", "a trajectories file",
                                         [&](const json& j, const std::string& where) -> common::Fallible {
    try {
      const auto key = std::make_tuple(j.at("task").get<std::string>(), j.at("trajectory").get<int>(), j.at("turn").get<int>());
      if (j.value("update", false)) {
        if (auto it = index.find(key); it != index.end()) episodes[it->second].advantage = j.at("advantage").get<double>();
        return common::Ok{};
      }
      auto e = episode_from(j);
      if (!e) return common::make_error(where + ": " + e.error().message);
      index[key] = episodes.size();
      episodes.push_back(std::move(*e));
    } catch (const json::exception& ex) {
      return common::make_error(where + ": " + ex.what());
    }
    return common::Ok{};
  }, warnings);
  if (!read) return read.error();
  return episodes;
}

bool is_unanswered(const Episode& e) { return e.status == "PROMPT_TOO_LONG"; }

bool is_degenerate(const Episode& e) {
  if (is_unanswered(e)) return false;
  return e.response_ids.empty() || e.status == "PARSE_ERROR" || e.status == "POLICY_ERROR" || e.truncated;
}

}  // namespace kernelrl::train
