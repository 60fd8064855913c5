// The protocol between engine, worker and evaluating child (eval/protocol.hpp) and the phase table
// it runs on (eval/phases.hpp): which lock and limit each phase gets, what the engine makes of a
// child's last phase, and the messages' JSON, which must stay what the other side reads.
#include "eval/protocol.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "eval/phases.hpp"
#include "sandbox/child_process.hpp"

namespace kernelrl::eval {
namespace {

using Mode = sandbox::DeviceLock::Mode;

TEST(Phases, TheTableIsInTheEnumsOrderWithUniqueNames) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < kPhases.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(kPhases[i].phase), i);
    EXPECT_TRUE(names.insert(std::string(kPhases[i].name)).second) << kPhases[i].name;
    EXPECT_EQ(parse_phase(kPhases[i].name), kPhases[i].phase);
  }
  EXPECT_EQ(phase_name(Phase::REF_TIMING), "ref_timing");
  EXPECT_FALSE(parse_phase("recheck"));  // a step inside timing, never announced
  EXPECT_FALSE(parse_phase(sandbox::kStartPhase));
}

// The calibration's idle calls are timed alone as calls are; the load after it shares the device again.
TEST(Phases, ChecksShareTheDeviceAndTimedWorkHoldsItAlone) {
  EXPECT_EQ(lock_mode_for("setup", Mode::NONE), Mode::SHARED);
  EXPECT_EQ(lock_mode_for("calibration", Mode::SHARED), Mode::EXCLUSIVE);
  EXPECT_EQ(lock_mode_for("load", Mode::EXCLUSIVE), Mode::SHARED);
  EXPECT_EQ(lock_mode_for("correctness", Mode::SHARED), Mode::SHARED);
  EXPECT_EQ(lock_mode_for("timing", Mode::SHARED), Mode::EXCLUSIVE);
  EXPECT_EQ(lock_mode_for("ref_timing", Mode::NONE), Mode::EXCLUSIVE);
  EXPECT_EQ(lock_mode_for("made-up", Mode::SHARED), Mode::SHARED);
  EXPECT_EQ(lock_mode_for("recheck", Mode::NONE), Mode::NONE);
}

TEST(Phases, FixedLimitsComeFromTheOptions) {
  EvalOptions o;
  o.timeout_setup_s = 1;
  o.timeout_load_s = 2;
  o.timeout_correctness_s = 3;
  o.timeout_timing_s = 4;
  const std::map<std::string, double> expected{
      {"setup", 1}, {"calibration", 2}, {"load", 2}, {"correctness", 3}, {"timing", 4}, {"ref_timing", 4}};
  EXPECT_EQ(fixed_phase_limits_s(o), expected);
}

TEST(Phases, OnlyTheTasksCodeRanBeforeLoad) {
  EXPECT_FALSE(candidate_code_may_have_run(sandbox::kStartPhase));
  EXPECT_FALSE(candidate_code_may_have_run("setup"));
  EXPECT_FALSE(candidate_code_may_have_run("calibration"));  // the candidate's process has loaded nothing yet
  EXPECT_TRUE(candidate_code_may_have_run("load"));
  EXPECT_TRUE(candidate_code_may_have_run("correctness"));
  EXPECT_TRUE(candidate_code_may_have_run("timing"));
  EXPECT_TRUE(candidate_code_may_have_run("something a candidate wrote"));
}

TEST(Protocol, ChildRequestKeepsItsWireNames) {
  ChildRequest r;
  r.op = ChildOp::TASK_INFO;
  r.artifact = "/tmp/a.so";
  r.format = common::Format::KERNELBENCH;
  r.rules = common::RuleSet::KERNELBENCH;
  r.device = "cuda";
  r.cached_ref = TimingSummary{3, 1.5};
  const nlohmann::json j = r;
  EXPECT_EQ(j.at("op"), "task_info");
  EXPECT_EQ(j.at("format"), "kernelbench");
  EXPECT_EQ(j.at("rules"), "kernelbench");
  const auto back = j.get<ChildRequest>();
  EXPECT_EQ(back.op, ChildOp::TASK_INFO);
  EXPECT_EQ(back.artifact, "/tmp/a.so");
  EXPECT_EQ(back.format, common::Format::KERNELBENCH);
  EXPECT_EQ(back.rules, common::RuleSet::KERNELBENCH);
  ASSERT_TRUE(back.cached_ref);
  EXPECT_EQ(back.cached_ref->n, 3);
  const nlohmann::json device_info_request = {{"op", "device_info"}};
  EXPECT_EQ(device_info_request.get<ChildRequest>().op, ChildOp::DEVICE_INFO);
  EXPECT_EQ(nlohmann::json::object().get<ChildRequest>().op, ChildOp::EVAL);
}

// Where kernelbench candidates run: on a GPU by default, as a word on the wire; the booleans of
// earlier option files still read (true: always, false: never); anything else is an error naming it.
// Native candidates (which run only on a GPU) have their own process by default too.
TEST(Protocol, WhereCandidatesRunIsAWordOrABoolean) {
  EXPECT_TRUE(EvalOptions{}.native_candidate_process);
  EXPECT_TRUE(nlohmann::json::object().get<EvalOptions>().native_candidate_process);
  const nlohmann::json in_child = {{"native_candidate_process", false}};
  EXPECT_FALSE(in_child.get<EvalOptions>().native_candidate_process);
  EXPECT_EQ(EvalOptions{}.kernelbench_candidate_process, CandidateProcess::ALWAYS);  // on the CPU too
  EXPECT_EQ(nlohmann::json(EvalOptions{}).at("kernelbench_candidate_process"), "always");
  const auto read = [](const nlohmann::json& v) {
    return nlohmann::json{{"kernelbench_candidate_process", v}}.get<EvalOptions>().kernelbench_candidate_process;
  };
  EXPECT_EQ(read("never"), CandidateProcess::NEVER);
  EXPECT_EQ(read("always"), CandidateProcess::ALWAYS);
  EXPECT_EQ(read(true), CandidateProcess::ALWAYS);
  EXPECT_EQ(read(false), CandidateProcess::NEVER);
  try {
    read("sometimes");
    ADD_FAILURE() << "\"sometimes\" was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"sometimes\""), std::string::npos) << e.what();
  }
}

// The ways a device found full reads (the runtime's, torch's; a context that could not be made
// beside a hoarder, 2026-12-03), as the H200 soaks wrote them, and a candidate's own failure that is
// not one.
TEST(Protocol, ADeviceFoundFullIsToldFromACandidatesFailure) {
  EXPECT_TRUE(says_device_memory_ran_out(
      "tests/ladder/task_softmax.py: unexpected Python error: AcceleratorError: CUDA error: CUDA-capable device(s) "
      "is/are busy or unavailable\nSearch for `cudaErrorDevicesUnavailable' in https://docs.nvidia.com/cuda/"));
  EXPECT_TRUE(says_device_memory_ran_out(
      "cannot set up the timer: cudaMalloc(&buffer_, static_cast<size_t>(bytes_)) failed at gpu.cpp:54: out of memory "
      "(cudaErrorMemoryAllocation)"));
  EXPECT_TRUE(says_device_memory_ran_out(
      "the reference forward raised: OutOfMemoryError: CUDA out of memory. Tried to allocate 192.00 MiB."));
  EXPECT_FALSE(says_device_memory_ran_out("kernelrl_forward returned 7 (non-zero means failure)"));
  EXPECT_FALSE(says_device_memory_ran_out("CUDA error after the candidate's call: an illegal memory access"));

  EvalResult crashed = make_result(common::Status::RUNTIME_ERROR, "killed by signal 6");  // no isolation at all
  EXPECT_FALSE(found_device_memory_short(crashed));
  EvalResult short_of_memory = crashed;
  short_of_memory.isolation = {{"device_memory_short", true}};
  EXPECT_TRUE(found_device_memory_short(short_of_memory));
  short_of_memory.status = common::Status::WRONG_OUTPUT;
  EXPECT_FALSE(found_device_memory_short(short_of_memory));
  crashed.isolation = {{"device_memory_short", "yes"}};
  EXPECT_FALSE(found_device_memory_short(crashed));
}

TEST(Protocol, WorkerRequestCarriesTheHandOverTimeOnlyWhenSet) {
  WorkerRequest r{"/t/task.py", ChildRequest{}, std::nullopt};
  nlohmann::json j = r;
  EXPECT_FALSE(j.contains("handed_at_ns"));
  r.handed_at_ns = 42;
  j = r;
  const auto back = j.get<WorkerRequest>();
  EXPECT_EQ(back.task, "/t/task.py");
  EXPECT_EQ(back.handed_at_ns, 42);
}

TEST(Protocol, AnEvaluationRecordRoundTrips) {
  ChildRecord r;
  r.result = make_result(common::Status::WRONG_OUTPUT, "output 0 is wrong");
  r.signature = task::Signature{};
  r.signature->outputs.push_back({"output 0", {4, 8}, "float32"});
  r.ref_timing = TimingSummary{10, 2.0};
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j.size(), 3u);  // result, signature, ref_timing
  auto back = parse_child_record(j);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_TRUE(back->result);
  EXPECT_EQ(back->result->status, common::Status::WRONG_OUTPUT);
  EXPECT_EQ(back->result->error.message, "output 0 is wrong");
  ASSERT_TRUE(back->signature);
  ASSERT_EQ(back->signature->outputs.size(), 1u);
  EXPECT_EQ(back->signature->outputs[0].shape, (std::vector<std::int64_t>{4, 8}));
  ASSERT_TRUE(back->ref_timing);
  EXPECT_EQ(back->ref_timing->n, 10);
  EXPECT_FALSE(back->task_error);
  EXPECT_FALSE(back->health);
}

TEST(Protocol, TaskErrorsAndDeviceInfoAreRecordsOfTheirOwn) {
  auto error = parse_child_record({{"task_error", "task.py: forward raised"}});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->task_error, "task.py: forward raised");
  EXPECT_FALSE(error->result);
  auto device = parse_child_record({{"device_info", {{"cuda_available", false}}}});
  ASSERT_TRUE(device);
  ASSERT_TRUE(device->device_info);
  EXPECT_FALSE(device->device_info->at("cuda_available").get<bool>());
}

TEST(Protocol, AMalformedRecordIsAnErrorNamingWhatIsWrong) {
  auto none = parse_child_record({{"phase", "setup"}});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("none of result"), std::string::npos) << none.error().message;
  auto bad = parse_child_record({{"result", {{"status", 17}}}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("malformed"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(parse_child_record(nlohmann::json::array()));
}

TEST(Protocol, WorkerRepliesCarryAnErrorOrAnOutcome) {
  WorkerReply ok;
  ok.record = nlohmann::json{{"task_error", "x"}};
  ok.outcome.has_record = true;
  ok.outcome.last_phase = "setup";
  ok.outcome.wall_ms = 12.5;
  ok.outcome.lock_wait_ms = 1.5;
  const nlohmann::json j = ok;
  for (const char* key : {"has_record", "last_phase", "timed_out", "phase_limit_s", "exit_code", "term_signal", "end",
                          "stderr_tail", "wall_ms", "lock_wait_ms"}) {
    EXPECT_TRUE(j.at("outcome").contains(key)) << key;
  }
  auto back = parse_worker_reply(j);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_FALSE(back->error);
  ASSERT_TRUE(back->record);
  EXPECT_EQ(back->outcome.last_phase, "setup");
  EXPECT_DOUBLE_EQ(back->outcome.lock_wait_ms, 1.5);

  WorkerReply failed;
  failed.error = "task.py: task file not found";
  const nlohmann::json e = failed;
  EXPECT_EQ(e, (nlohmann::json{{"error", "task.py: task file not found"}}));
  auto error = parse_worker_reply(e);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->error, "task.py: task file not found");

  EXPECT_FALSE(parse_worker_reply({{"id", 3}}));
}

}  // namespace
}  // namespace kernelrl::eval
