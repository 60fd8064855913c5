#include "rollout/run_dir.hpp"

#include <chrono>
#include <ctime>
#include <set>

#include "common/fs.hpp"
#include "common/provenance.hpp"
#include "rollout/settings.hpp"
#include "trajectory/reader.hpp"

namespace kernelrl::rollout {

namespace fs = std::filesystem;
using common::make_error;
using nlohmann::json;

namespace {

// May differ on resume. The device may not: speedups measured on two devices do not mix.
const std::set<std::string> kProvenanceKeys = {"commit", "started_at", "concurrency"};

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string extension(common::Format format) {
  switch (format) {
    case common::Format::HOST:
      return "cpp";
    case common::Format::KERNELBENCH:
      return "py";
    case common::Format::NATIVE:
      break;
  }
  return "cu";
}

// The first key path where `stored` and `current` differ, or "" when they agree. A key the run's
// record lacks whose value here is "" is a setting added since the run began, left off (e.g. the
// evaluator's `precision`): the same.
std::string first_difference(const json& stored, const json& current, const std::string& prefix) {
  if (!stored.is_object() || !current.is_object()) return stored == current ? "" : prefix;
  std::set<std::string> keys;
  for (const auto& [k, v] : stored.items()) keys.insert(k);
  for (const auto& [k, v] : current.items()) keys.insert(k);
  for (const auto& k : keys) {
    if (prefix.empty() && kProvenanceKeys.count(k)) continue;
    const std::string path = prefix.empty() ? k : prefix + "." + k;
    if (!stored.contains(k) && current.contains(k) && current[k] == "") continue;
    if (!stored.contains(k) || !current.contains(k)) return path;
    if (auto d = first_difference(stored[k], current[k], path); !d.empty()) return d;
  }
  return "";
}

const json& at_path(const json& j, const std::string& path) {
  static const json missing = "(absent)";
  const json* node = &j;
  std::size_t begin = 0;
  while (begin <= path.size()) {
    const std::size_t dot = path.find('.', begin);
    const std::string key = path.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin);
    if (!node->is_object() || !node->contains(key)) return missing;
    node = &(*node)[key];
    if (dot == std::string::npos) break;
    begin = dot + 1;
  }
  return *node;
}

}  // namespace

fs::path run_json_path(const fs::path& out_dir) { return out_dir / "run.json"; }
fs::path trajectories_path(const fs::path& out_dir) { return out_dir / trajectory::kFileName; }

fs::path candidate_path(const fs::path& out_dir, common::Format format, const std::string& task_id, int trajectory,
                        int turn) {
  return out_dir / "candidates" / task_id /
         ("t" + std::to_string(trajectory) + "_turn" + std::to_string(turn) + "." + extension(format));
}

json make_run_json(const RolloutConfig& c, const json& policy, const std::string& device) {
  json run = describe_settings(c);
  run["schema"] = 1;
  run["policy"] = policy;
  run["commit"] = common::project_commit();
  run["started_at"] = utc_now();
  run["device"] = device;
  run["concurrency"] = c.concurrency;
  return run;
}

common::Fallible check_same_settings(const json& stored, const json& current) {
  const std::string field = first_difference(stored, current, "");
  if (field.empty()) return common::Ok{};
  return make_error("field `" + field + "` is " + at_path(stored, field).dump() + " in the run but " +
                    at_path(current, field).dump() +
                    " in this command; resume with the run's settings, or start a new run with another --out");
}

common::Expected<bool> open_run_dir(const fs::path& out_dir, const json& run_json) {
  const fs::path file = run_json_path(out_dir);
  std::error_code ec;
  if (fs::exists(file, ec)) {
    auto text = common::read_file(file);
    if (!text) return text.error();
    json stored = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (stored.is_discarded() || !stored.is_object()) return make_error(file.string() + ": not a JSON object");
    if (auto same = check_same_settings(stored, run_json); !same) return make_error(file.string() + ": " + same.error().message);
    return true;
  }
  if (fs::exists(out_dir, ec) && !fs::is_empty(out_dir, ec)) {
    return make_error(out_dir.string() + ": exists and holds files but no run.json; choose an empty or new folder for --out");
  }
  fs::create_directories(out_dir, ec);
  if (ec) return make_error(out_dir.string() + ": cannot create the run folder: " + ec.message());
  if (auto written = common::write_file_atomic(file, run_json.dump(2) + "\n"); !written) return written.error();
  return false;
}

}  // namespace kernelrl::rollout
