// read_trajectory_file: parse each line, keep full records by (task, trajectory, turn), patch
// them with update records. A bad line is only forgiven when nothing follows it.
#include "metrics/trajectory_file.hpp"

#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/json_lines.hpp"

namespace kernelrl::metrics {

namespace fs = std::filesystem;
using common::Expected;
using common::make_error;
using nlohmann::json;

namespace {

using TurnKey = std::tuple<std::string, int, int>;  // (task, trajectory, turn)

struct LineContext {
  std::string where;  // "FILE:LINE", the prefix of every error about this line
};

std::optional<std::string> field_error(const json& j, const char* name, bool (json::*is_kind)() const,
                                       const char* kind) {
  if (!j.contains(name)) return std::string("missing field `") + name + "`";
  if (!(j[name].*is_kind)()) return std::string("field `") + name + "` is not " + kind;
  return std::nullopt;
}

// The fields every record (full or update) needs to be placed.
Expected<TurnKey> read_key(const json& j, const LineContext& at) {
  if (auto e = field_error(j, "task", &json::is_string, "a string")) return make_error(at.where + ": " + *e);
  if (auto e = field_error(j, "trajectory", &json::is_number_integer, "an integer")) return make_error(at.where + ": " + *e);
  if (auto e = field_error(j, "turn", &json::is_number_integer, "an integer")) return make_error(at.where + ": " + *e);
  TurnKey key{j["task"].get<std::string>(), j["trajectory"].get<int>(), j["turn"].get<int>()};
  if (std::get<1>(key) < 0) return make_error(at.where + ": field `trajectory` is negative");
  if (std::get<2>(key) < 1) return make_error(at.where + ": field `turn` is below 1 (turns count from 1)");
  return key;
}

// A number, or none for null or absent; an Error for anything else.
Expected<std::optional<double>> optional_number(const json& j, const char* name, const LineContext& at) {
  if (!j.contains(name) || j[name].is_null()) return std::optional<double>{};
  if (!j[name].is_number()) return make_error(at.where + ": field `" + std::string(name) + "` is not a number or null");
  return std::optional<double>{j[name].get<double>()};
}

std::string task_id_from_path(const std::string& task) { return fs::path(task).stem().string(); }

Expected<TurnRecord> read_full_record(const json& j, const TurnKey& key, const LineContext& at) {
  TurnRecord r;
  std::tie(r.task, r.trajectory, r.turn) = key;
  if (auto e = field_error(j, "correct", &json::is_boolean, "true or false")) return make_error(at.where + ": " + *e);
  r.correct = j["correct"].get<bool>();
  r.task_id = j.contains("task_id") && j["task_id"].is_string() ? j["task_id"].get<std::string>() : task_id_from_path(r.task);
  if (j.contains("level") && !j["level"].is_null()) {
    if (!j["level"].is_number_integer()) return make_error(at.where + ": field `level` is not an integer or null");
    r.level = j["level"].get<int>();
  }
  if (j.contains("split") && !j["split"].is_null()) {
    if (!j["split"].is_string()) return make_error(at.where + ": field `split` is not a string or null");
    r.split = j["split"].get<std::string>();
  }
  auto speedup = optional_number(j, "speedup", at);
  auto ret = optional_number(j, "return", at);
  auto advantage = optional_number(j, "advantage", at);
  for (const auto* e : {&speedup, &ret, &advantage}) {
    if (!*e) return e->error();
  }
  r.speedup = *speedup;
  r.return_ = *ret;
  r.advantage = *advantage;
  auto text = [&](const json& v) { return v.is_string() ? v.get<std::string>() : std::string(); };
  if (j.contains("code")) r.code = text(j["code"]);
  if (j.contains("score") && j["score"].is_number()) r.score = j["score"].get<double>();
  if (j.contains("policy_error") && j["policy_error"].is_string()) {
    r.status = "POLICY_ERROR";
    r.feedback = j["policy_error"].get<std::string>();
  } else if (j.contains("parse_error") && j["parse_error"].is_string()) {
    r.status = "PARSE_ERROR";
    r.feedback = j["parse_error"].get<std::string>();
  } else if (j.contains("result") && j["result"].is_object()) {
    const json& result = j["result"];
    if (result.contains("status")) r.status = text(result["status"]);
    if (result.contains("error") && result["error"].is_object() && result["error"].contains("message")) {
      r.feedback = text(result["error"]["message"]);
    }
  }
  return r;
}

}  // namespace

fs::path trajectory_file_path(const fs::path& run_dir_or_jsonl) {
  std::error_code ec;
  return fs::is_directory(run_dir_or_jsonl, ec) ? run_dir_or_jsonl / "trajectories.jsonl" : run_dir_or_jsonl;
}

Expected<TrajectoryFile> read_trajectory_file(const fs::path& path) {
  TrajectoryFile file;
  file.path = path;
  std::map<TurnKey, std::size_t> index_of;  // where each turn's record sits in file.records
  auto read = common::for_each_json_line<json>(path, "a trajectories file", [&](const json& j, const std::string& where)
                                                                           -> common::Fallible {
    const LineContext at{where};
    auto key = read_key(j, at);
    if (!key) return key.error();
    auto found = index_of.find(*key);
    const bool is_update = j.contains("update") && j["update"].is_boolean() && j["update"].get<bool>();
    if (is_update) {
      if (found == index_of.end()) {
        return make_error(at.where + ": update for a turn with no earlier record (task " + std::get<0>(*key) +
                          ", trajectory " + std::to_string(std::get<1>(*key)) + ", turn " +
                          std::to_string(std::get<2>(*key)) + ")");
      }
      TurnRecord& r = file.records[found->second];
      auto ret = optional_number(j, "return", at);
      auto advantage = optional_number(j, "advantage", at);
      if (!ret) return ret.error();
      if (!advantage) return advantage.error();
      if (j.contains("return")) r.return_ = *ret;
      if (j.contains("advantage")) r.advantage = *advantage;
      return common::Ok{};
    }
    auto record = read_full_record(j, *key, at);
    if (!record) return record.error();
    if (found != index_of.end()) {
      file.warnings.push_back(at.where + ": repeats an earlier record for the same turn; keeping this one");
      file.records[found->second] = std::move(*record);
      return common::Ok{};
    }
    index_of.emplace(*key, file.records.size());
    file.records.push_back(std::move(*record));
    return common::Ok{};
  }, file.warnings);
  if (!read) return read.error();
  return file;
}

}  // namespace kernelrl::metrics
