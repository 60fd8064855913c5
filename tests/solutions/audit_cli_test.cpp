// `kernelrl audit` as a user runs it on the CPU: a set in CUDA-L1's layout, each solution under the
// three rule sets, fallbacks told apart by what the calls ran, claims judged, a stopped audit
// resumed without running anything again, and bad input named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"
#include "common/subprocess.hpp"

namespace kernelrl {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct CliRun {
  int code = -1;
  std::string output;
};

CliRun kernelrl(std::vector<std::string> args) {
  args.insert(args.begin(), KERNELRL_BINARY);
  common::RunLimits limits;
  limits.wall_time = std::chrono::minutes(10);
  auto r = common::run_process(args, KERNELRL_SOURCE_DIR, {"KERNELRL_CACHE_DIR=" +
      (fs::temp_directory_path() / "kernelrl-cli-test-cache").string()}, limits);
  EXPECT_TRUE(r) << r.error().message;
  return r ? CliRun{r->exit_code, r->output} : CliRun{};
}

std::string source(const std::string& relative) {
  auto text = common::read_file(fs::path(KERNELRL_SOURCE_DIR) / relative);
  EXPECT_TRUE(text) << relative;
  return text ? *text : "";
}

TEST(AuditCli, ASetIsJudgedUnderEveryRuleSetWithItsFallbacksToldApart) {
  const fs::path dir = fs::temp_directory_path() / "kernelrl-audit-cli";
  fs::remove_all(dir);
  fs::create_directories(dir / "tasks/level1");
  fs::copy_file(fs::path(KERNELRL_SOURCE_DIR) / "tests/ladder/task_softmax_small.py", dir / "tasks/level1/001_softmax_small.py");
  {
    std::ofstream set(dir / "set.jsonl");
    set << json{{"level_id", 1}, {"task_id", 1}, {"name", "fallback_never_runs"}, {"score_default", 0.01},
                {"custom_code", source("tests/solutions/cpu/softmax_fallback_never_runs.py")}}.dump() << "\n"
        << json{{"level_id", 1}, {"task_id", 1}, {"name", "fallback_always_runs"}, {"score_default", 1.0},
                {"custom_code", source("tests/solutions/cpu/softmax_fallback_always_runs.py")}}.dump() << "\n"
        << json{{"level_id", 1}, {"task_id", 2}, {"custom_code", nullptr}, {"score_default", 1.1}}.dump() << "\n"
        << json{{"level_id", 1}, {"task_id", 7}, {"custom_code", "class ModelNew: pass"}}.dump() << "\n";
  }
  const std::vector<std::string> args = {"audit", (dir / "set.jsonl").string(), "--tasks", (dir / "tasks").string(),
                                         "--out", (dir / "out").string(), "--device", "cpu"};
  const CliRun run = kernelrl(args);
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("fallback_never_runs"), std::string::npos) << run.output;
  auto doc = json::parse(source((dir / "out/audit.json").string()), nullptr, false);
  ASSERT_TRUE(doc.is_object());
  const json& rows = doc["rows"];
  ASSERT_EQ(rows.size(), 4u) << doc.dump(1);

  const json& never = rows[0];
  EXPECT_EQ(never["strict"]["status"], "REJECTED") << never.dump(1);
  EXPECT_NE(never["strict"]["reason"].get<std::string>().find("try/except"), std::string::npos);
  EXPECT_EQ(never["kernelbench"]["status"], "REJECTED");
  EXPECT_EQ(never["observe"]["status"], "OK") << never.dump(1);
  EXPECT_EQ(never["fallback"], "never ran");
  EXPECT_EQ(never["claim"], "holds");

  const json& always = rows[1];
  EXPECT_EQ(always["observe"]["status"], "OK") << always.dump(1);
  EXPECT_TRUE(always["fallback_ran"]);
  EXPECT_NE(always["fallback"].get<std::string>().find("(PyTorch compute)"), std::string::npos);
  EXPECT_EQ(always["claim"], "does not hold: its fallback ran");

  EXPECT_EQ(rows[2]["not_evaluated"], "no solution published");
  EXPECT_NE(rows[3]["not_evaluated"].get<std::string>().find("level 1 task number 7"), std::string::npos);
  const json& s = doc["summary"];
  EXPECT_EQ(s["evaluated"], 2);
  EXPECT_EQ(s["fallback_ran"], 1);
  EXPECT_EQ(s["fallback_never_ran"], 1);
  EXPECT_EQ(s["claims"], 2);
  EXPECT_EQ(s["claims_hold"], 1);
  EXPECT_EQ(s["claims_not_measured"], 1);
  EXPECT_EQ(s["evaluations_run"], 6);
  EXPECT_TRUE(fs::exists(dir / "out/audit.html"));

  // The observe record itself carries the evidence the row was read from.
  int observed = 0;
  std::ifstream records(dir / "out/records.jsonl");
  for (std::string line; std::getline(records, line);) {
    const json r = json::parse(line);
    if (r.value("rules", "") != "observe") continue;
    ++observed;
    const json calls = r["isolation"]["candidate_process"]["calls"];
    EXPECT_GT(calls.value("calls", 0), 10) << r.dump(1);
    EXPECT_EQ(calls.value("records", 0), calls.value("calls", -1));
  }
  EXPECT_EQ(observed, 2);

  // CliRun again: nothing is evaluated twice.
  const CliRun again = kernelrl(args);
  ASSERT_EQ(again.code, 0) << again.output;
  auto redone = json::parse(source((dir / "out/audit.json").string()));
  EXPECT_EQ(redone["summary"]["evaluations_run"], 0);
  EXPECT_EQ(redone["summary"]["evaluations_from_earlier_runs"], 6);
  EXPECT_EQ(redone["rows"][1]["fallback"], always["fallback"]);

  // The table alone, from records and nothing else: here none, so every verdict is missing.
  std::vector<std::string> table_only = args;
  table_only[5] = (dir / "empty-out").string();
  table_only.push_back("--table-only");
  const CliRun table = kernelrl(table_only);
  ASSERT_EQ(table.code, 0) << table.output;
  auto empty = json::parse(source((dir / "empty-out/audit.json").string()));
  EXPECT_EQ(empty["summary"]["evaluations_run"], 0);
  EXPECT_EQ(empty["summary"]["evaluations_missing"], 6);
  EXPECT_EQ(empty["rows"][0]["observe"]["status"], "");
}

TEST(AuditCli, BadInputIsNamed) {
  const fs::path dir = fs::temp_directory_path() / "kernelrl-audit-cli-bad";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "set.jsonl") << "{\"task_id\": 1, \"custom_code\": 3}\n";
  CliRun bad_set = kernelrl({"audit", (dir / "set.jsonl").string(), "--tasks", "tests/ladder", "--out", (dir / "out").string(), "--device", "cpu"});
  EXPECT_EQ(bad_set.code, 2);
  EXPECT_NE(bad_set.output.find("set.jsonl:1: \"custom_code\" must be a string"), std::string::npos) << bad_set.output;
  std::ofstream(dir / "good.jsonl") << "{\"task_id\": 1, \"custom_code\": \"class ModelNew: pass\"}\n";
  CliRun no_tasks = kernelrl({"audit", (dir / "good.jsonl").string(), "--tasks", (dir / "absent").string(), "--out",
                           (dir / "out").string(), "--device", "cpu"});
  EXPECT_EQ(no_tasks.code, 2);
  EXPECT_NE(no_tasks.output.find((dir / "absent").string() + ": not a folder of task files"), std::string::npos)
      << no_tasks.output;
  CliRun rules = kernelrl({"audit", (dir / "set.jsonl").string(), "--tasks", "tests/ladder", "--rules", "strict"});
  EXPECT_EQ(rules.code, 64);
  EXPECT_NE(rules.output.find("--rules does not apply"), std::string::npos) << rules.output;
}

}  // namespace
}  // namespace kernelrl
