// The runner tests' shared set-up: one CPU engine per test binary (its worker imports torch once),
// a rollout configuration over the small softmax task in the host format, and the run's records
// split into turn records and update records.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <utility>

#include "../eval/engine_test_util.hpp"
#include "rollout/runner.hpp"
#include "policy/scripted_policy.hpp"
#include "rollout_test_util.hpp"

namespace kernelrl::rollout::testing {

struct RunRecords {
  std::map<std::pair<int, int>, nlohmann::json> turns;   // by (trajectory, turn)
  std::map<std::pair<int, int>, nlohmann::json> updates;  // by (trajectory, turn); the last one wins
  int n_turn_lines = 0;
  int n_update_lines = 0;
  const nlohmann::json& turn(int trajectory, int turn) const { return turns.at({trajectory, turn}); }
};

inline RunRecords read_run(const std::filesystem::path& out) {
  RunRecords r;
  for (auto& line : read_json_lines(out / "trajectories.jsonl")) {
    const std::pair<int, int> key{line["trajectory"].get<int>(), line["turn"].get<int>()};
    if (line.value("update", false)) {
      ++r.n_update_lines;
      r.updates[key] = line;
    } else {
      ++r.n_turn_lines;
      r.turns[key] = line;
    }
  }
  return r;
}

// The answer of a policy that writes the off-by-one kernel first and the correct one once it has
// seen an earlier attempt. Token ids and log-probabilities are made up, to check they are kept.
inline policy::ScriptedPolicy wrong_then_correct() {
  return policy::ScriptedPolicy([](const std::vector<Message>& messages, int) -> common::Expected<policy::PolicyResponse> {
    const bool later_turn = messages.back().content.find("Attempt 1:") != std::string::npos;
    policy::PolicyResponse r;
    r.content = later_turn ? host_answer(kCorrect, "fixed the last column") : host_answer(kOffByOne, "one pass per row");
    r.finish_reason = "stop";
    r.token_ids = std::vector<std::int64_t>{1, 2, 3};
    r.logprobs = std::vector<double>{-0.5, -0.25, -0.125};
    r.latency_ms = 12;
    return r;
  });
}

class RolloutRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto e = eval::Engine::create(eval::testing::test_config("cpu"));
    ASSERT_TRUE(e) << e.error().message;
    engine_ = std::move(*e);
  }
  static void TearDownTestSuite() {
    engine_.reset();
    std::filesystem::remove_all(eval::testing::test_cache_dir());
  }
  void TearDown() override {
    if (!HasFailure()) std::filesystem::remove_all(scratch_path());  // a failed test's run stays to look at
  }

  // m x n trajectories of the small softmax task in the host format, written to `out`.
  static RolloutConfig config(const std::filesystem::path& out, int m, int n) {
    RolloutConfig c;
    c.tasks = {source_path(kTask)};
    c.format = common::Format::HOST;
    c.n_trajectories = m;
    c.n_turns = n;
    c.concurrency = 2;
    c.out_dir = out;
    return c;
  }

  static common::Expected<RolloutSummary> run(const RolloutConfig& c, policy::Policy& policy,
                                              std::vector<trajectory::TurnRecord>* records = nullptr) {
    return rollout::RolloutRunner(c, policy, *engine_).run(records);
  }

  static inline std::unique_ptr<eval::Engine> engine_;
};

}  // namespace kernelrl::rollout::testing
