// The evaluation service end to end on the CPU: redis-server, `kernelrl serve` and three
// `kernelrl worker --redis` processes, host candidates submitted over HTTP. Jobs in and results
// out; a worker SIGKILLed mid-job and its job finished by another with one stored result; a job
// that kills its workers ends as RUNTIME_ERROR; a burst with 10% faulty candidates (crash, hang,
// wrong output) ends with one result per job; Redis killed and restarted mid-run loses no
// acknowledged result; `--gpus 0,1` runs one process per GPU, pinned with CUDA_VISIBLE_DEVICES;
// `kernelrl rollout --eval-service` gives the in-process engine's results (`train`'s: train_e2e_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

#include "common/subprocess.hpp"
#include "e2e_fixture.hpp"
#include "rollout_test_util.hpp"
#include "scripted_server.hpp"

namespace kernelrl::service::testing {
namespace {

std::unique_ptr<ServiceEnv> env;  // shared by the tests of this binary

class ServiceE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!env) env = std::make_unique<ServiceEnv>();
  }
  void SetUp() override { env->ensure_workers(); }
  void TearDown() override {
    if (HasFailure()) std::cerr << "--- serve.log\n" << env->serve_log() << env->worker_logs();
  }
};

// Waits for job `id` to satisfy `pred` (on its GET view), up to timeout_s.
nlohmann::json poll_job(const std::string& id, double timeout_s, const std::function<bool(const nlohmann::json&)>& pred) {
  nlohmann::json view;
  auto h = env->http();
  eventually(timeout_s, [&] {
    view = h.get("/v1/evaluations/" + id).body;
    return pred(view);
  }, 20);
  return view;
}

TEST_F(ServiceE2E, HostJobsInResultsOut) {
  const std::map<std::string, std::string> expected = {{"correct.cpp", "OK"},
                                                       {"off_by_one.cpp", "WRONG_OUTPUT"},
                                                       {"abort.cpp", "RUNTIME_ERROR"},
                                                       {"compile_error.cpp", "COMPILE_ERROR"},
                                                       {"forbidden_include.cpp", "REJECTED"},
                                                       {"empty.cpp", "FORMAT_ERROR"}};
  std::vector<nlohmann::json> jobs;
  for (const auto& [file, status] : expected) {
    jobs.push_back({{"task", "ladder/task_softmax_small.py"},
                    {"candidate", read_text(source_path("tests/ladder/host/" + file))},
                    {"candidate_name", "tests/ladder/host/" + file},
                    {"options", {{"n_trials", 2}, {"min_reps", 2}, {"max_reps", 5}, {"n_warmup", 1}}}});
  }
  auto [batch, ids] = env->submit(jobs);
  ASSERT_EQ(ids.size(), jobs.size());
  auto done = env->wait_batch(batch, 240);
  ASSERT_TRUE(done.value("done", false)) << done.dump().substr(0, 2000);
  std::size_t i = 0;
  for (const auto& [file, status] : expected) {
    const auto& view = done["jobs"][i];
    EXPECT_EQ(view["id"], ids[i]);
    const auto& r = view["result"];
    EXPECT_EQ(r["status"], status) << file << ": " << r.dump().substr(0, 1500);
    // The record `kernelrl eval --json` prints, naming the task and candidate as the job did.
    EXPECT_EQ(r["task"], "ladder/task_softmax_small.py");
    EXPECT_EQ(r["candidate"], "tests/ladder/host/" + file);
    EXPECT_EQ(r["format"], "host");
    EXPECT_EQ(r["rules"], "strict");
    for (const char* key : {"correct", "runtime_us", "speedup", "error", "phases_ms", "versions", "commit", "timestamp"}) {
      EXPECT_TRUE(r.contains(key)) << file << " lacks " << key;
    }
    if (status == "OK") {
      EXPECT_GT(r["speedup"].get<double>(), 0);
      EXPECT_EQ(r["seeds"].size(), 3u);  // init seed + the job's 2 trials
      // A task of the service's own task sets is trusted: loaded by the worker, no extra layer.
      EXPECT_FALSE(r["isolation"].contains("task_confinement")) << r["isolation"].dump();
    }
    ++i;
  }
}

// A task sent as text is code nobody vouched for: the worker never loads it, and the child that
// does confines its files first (eval/child_task_confinement.hpp). A task that tries to read
// /etc/passwd and to plant a file outside its scratch folder finds both refused, and reports it by
// raising; an honest one sent as text is evaluated OK under that layer.
TEST_F(ServiceE2E, ATaskSentAsTextReadsNoHostFileAndWritesOnlyItsScratch) {
  const fs::path planted = env->dir() / "planted-by-a-task.txt";
  const std::string probe = "import torch\n"
                            "def _try(action):\n"
                            "    try:\n"
                            "        action()\n"
                            "        return 'allowed'\n"
                            "    except OSError as e:\n"
                            "        return type(e).__name__\n"
                            "def _write(path):\n"
                            "    with open(path, 'w') as f:\n"
                            "        f.write('planted')\n"
                            "READ = _try(lambda: open('/etc/passwd').read())\n"
                            "WRITE = _try(lambda: _write(r'" + planted.string() + "'))\n"
                            "SCRATCH = _try(lambda: (_write('probe-in-scratch'), __import__('os').remove('probe-in-scratch')))\n"
                            "raise RuntimeError(f'probe read={READ} write={WRITE} scratch={SCRATCH}')\n";
  const nlohmann::json options = {{"n_trials", 2}, {"min_reps", 2}, {"max_reps", 5}, {"n_warmup", 1}};
  const std::string correct = read_text(source_path("tests/ladder/host/correct.cpp"));
  std::vector<nlohmann::json> jobs = {
      {{"task_source", probe}, {"task_name", "probe.py"}, {"candidate", correct}, {"candidate_name", "correct.cpp"},
       {"options", options}},
      {{"task_source", read_text(source_path("tests/ladder/task_softmax_small.py"))},
       {"task_name", "task_softmax_small.py"}, {"candidate", correct}, {"candidate_name", "correct.cpp"},
       {"options", options}}};
  auto [batch, ids] = env->submit(jobs);
  ASSERT_EQ(ids.size(), 2u);
  auto done = env->wait_batch(batch, 240);
  ASSERT_TRUE(done.value("done", false)) << done.dump().substr(0, 2000);
  const auto& refused = done["jobs"][0]["result"];
  EXPECT_NE(refused.value("could_not_evaluate", "").find("probe read=PermissionError write=PermissionError scratch=allowed"),
            std::string::npos)
      << refused.dump().substr(0, 1500);
  EXPECT_FALSE(fs::exists(planted));
  const auto& honest = done["jobs"][1]["result"];
  EXPECT_EQ(honest["status"], "OK") << honest.dump().substr(0, 1500);
  EXPECT_TRUE(honest["isolation"].value("task_confinement", false)) << honest.dump().substr(0, 1500);
}

TEST_F(ServiceE2E, AWorkerKilledMidJobLeavesItToAnotherWithOneResult) {
  const double finished_before = env->finished_total();
  auto [batch, ids] = env->submit({add_job("add_slow.cpp", {{"n_trials", 1}, {"time_kernels", false}})});
  ASSERT_EQ(ids.size(), 1u);
  auto running = poll_job(ids[0], 120, [](const auto& v) { return v.value("state", "") == "running"; });
  ASSERT_EQ(running["state"], "running") << running.dump();
  const std::string victim = running["worker"];
  ChildProcess* holder = env->worker_named(victim);
  ASSERT_NE(holder, nullptr) << victim;
  holder->kill_now();  // inside its evaluation: the candidate spins for a second or more per call

  auto done = poll_job(ids[0], 180, [](const auto& v) { return v.value("state", "") == "done"; });
  ASSERT_EQ(done["state"], "done") << done.dump();
  EXPECT_EQ(done["result"]["status"], "OK") << done["result"].dump().substr(0, 1500);
  EXPECT_EQ(done["attempts"], 2);  // evaluated once more after the kill
  EXPECT_NE(done["finished_by"], victim);
  EXPECT_EQ(env->finished_total(), finished_before + 1);  // exactly one stored result
  auto batch_view = env->http().get("/v1/batches/" + batch).body;
  EXPECT_EQ(batch_view["n_done"], 1);
}

TEST_F(ServiceE2E, AJobThatKillsItsWorkersEndsAsRuntimeError) {
  auto [batch, ids] = env->submit({add_job("add_slow.cpp", {{"n_trials", 1}, {"time_kernels", false}})});
  ASSERT_EQ(ids.size(), 1u);
  std::set<std::string> killed;
  for (int kill = 0; kill < 2; ++kill) {  // the workers run with --max-attempts 2
    auto running = poll_job(ids[0], 120, [&](const auto& v) {
      return v.value("state", "") == "running" && !killed.count(v.value("worker", ""));
    });
    ASSERT_EQ(running["state"], "running") << running.dump();
    killed.insert(running["worker"].get<std::string>());
    ChildProcess* holder = env->worker_named(running["worker"]);
    ASSERT_NE(holder, nullptr);
    holder->kill_now();
  }
  auto done = poll_job(ids[0], 60, [](const auto& v) { return v.value("state", "") == "done"; });
  ASSERT_EQ(done["state"], "done") << done.dump();
  EXPECT_EQ(done["result"]["status"], "RUNTIME_ERROR");
  const std::string message = done["result"]["error"]["message"];
  EXPECT_NE(message.find("handed to 2 worker processes and each died"), std::string::npos) << message;
  EXPECT_NE(message.find("--max-attempts 2"), std::string::npos) << message;
  EXPECT_EQ(done["result"]["candidate"], "add_slow.cpp");
  EXPECT_FALSE(killed.count(done["finished_by"]));
  EXPECT_GE(env->metrics()["kernelrl_jobs_poisoned_total"], 1);
}

// n jobs, 10% faulty (4% crash, 3% hang, 3% wrong output), in one batch: every job gets exactly
// one result with the status its candidate earns.
void burst(int n, double timeout_s) {
  const double finished_before = env->finished_total();
  std::vector<nlohmann::json> jobs;
  std::vector<std::string> expected;
  for (int i = 0; i < n; ++i) {
    const int k = i % 100;
    const char* file = k < 4 ? "add_crash.cpp" : k < 7 ? "add_hang.cpp" : k < 10 ? "add_wrong.cpp" : "add_ok.cpp";
    const char* status = k < 4 ? "RUNTIME_ERROR" : k < 7 ? "TIMEOUT" : k < 10 ? "WRONG_OUTPUT" : "OK";
    jobs.push_back(add_job(file));
    expected.push_back(status);
  }
  const auto t0 = clock_type::now();
  auto [batch, ids] = env->submit(jobs);
  ASSERT_EQ(ids.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), ids.size());
  auto done = env->wait_batch(batch, timeout_s);
  const double wall_s = seconds_since(t0);
  ASSERT_TRUE(done.value("done", false)) << "after " << wall_s << " s: " << done.value("n_done", 0) << " of " << n;
  std::map<std::string, int> wrong;
  int n_cache_hits = 0;
  for (int i = 0; i < n; ++i) {
    const auto& view = done["jobs"][i];
    EXPECT_EQ(view["id"], ids[i]);
    const nlohmann::json result = view.value("result", nlohmann::json::object());
    n_cache_hits += result.value("cache_hit", false);
    const std::string status = result.value("status", "none");
    if (status != expected[i]) ++wrong[expected[i] + " -> " + status + ": " + result.dump().substr(0, 600)];
  }
  EXPECT_TRUE(wrong.empty()) << nlohmann::json(wrong).dump(1);
  // The workers share one compile cache (a machine's): each of the 4 candidates is compiled at most
  // once per consumer thread (2 a worker: one evaluating, one prefetched), whatever the number of jobs.
  EXPECT_GE(n_cache_hits, n - 4 * 2 * ServiceEnv::kWorkers);
  auto m = env->metrics();
  EXPECT_EQ(env->finished_total(), finished_before + n);  // one stored result per job: none lost, none twice
  EXPECT_EQ(m["kernelrl_queue_depth"], 0);
  std::cout << "[ burst    ] " << n << " jobs (10% faulty) through " << ServiceEnv::kWorkers << " workers in " << wall_s
            << " s: " << n / wall_s << " jobs/s" << std::endl;
}

// Hang candidates stop at the jobs' 2 s correctness limit; the burst took 337 s on a shared 2-core
// machine at load average 14 (docs/service.md, Tests).
TEST_F(ServiceE2E, ABurstOf2000JobsWithFaultyCandidatesEndsWithOneResultEach) { burst(2000, 1200); }

TEST_F(ServiceE2E, RedisKilledAndRestartedMidRunLosesNoAcknowledgedResult) {
  std::vector<nlohmann::json> jobs(60, add_job("add_ok.cpp"));
  for (int i = 0; i < 6; ++i) jobs[static_cast<std::size_t>(i * 10)] = add_job("add_wrong.cpp");
  auto [batch, ids] = env->submit(jobs);
  ASSERT_EQ(ids.size(), 60u);
  auto h = env->http();
  nlohmann::json partial;
  ASSERT_TRUE(eventually(240, [&] {
    partial = h.get("/v1/batches/" + batch).body;
    return partial.value("n_done", 0) >= 15;
  }, 100));
  std::map<std::string, std::string> acknowledged;  // stored (and acked) before Redis went down
  for (const auto& v : partial["jobs"]) {
    if (v["state"] == "done") acknowledged[v["id"]] = v["result"].dump();
  }
  ASSERT_LT(acknowledged.size(), 60u) << "the run ended before Redis could be killed";
  env->redis().kill();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  env->redis().start();
  ASSERT_TRUE(env->redis().up()) << env->redis().log();

  auto done = env->wait_batch(batch, 300);
  ASSERT_TRUE(done.value("done", false)) << done.dump().substr(0, 1000);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < 60; ++i) {
    const auto& v = done["jobs"][i];
    seen.insert(v["id"]);
    EXPECT_EQ(v["result"]["status"], i % 10 == 0 ? "WRONG_OUTPUT" : "OK") << v.dump().substr(0, 800);
    if (acknowledged.count(v["id"])) {
      EXPECT_EQ(v["result"].dump(), acknowledged[v["id"]]) << "a stored result changed";
    }
  }
  EXPECT_EQ(seen.size(), 60u);
  std::cout << "[ restart  ] " << acknowledged.size() << " results stored before the kill, all kept" << std::endl;
}

TEST_F(ServiceE2E, GpusZeroAndOneRunOneProcessEachPinnedWithCudaVisibleDevices) {
  ChildProcess supervisor = env->start_worker({"--gpus", "0,1"});
  nlohmann::json slots, listed;
  ASSERT_TRUE(eventually(60, [&] {
    slots = nlohmann::json::array();
    listed = env->http().get("/v1/workers").body;
    for (const auto& w : listed.value("workers", nlohmann::json::array())) {
      if (w.value("seconds_since_heartbeat", 99.0) < 1.5 && w.value("slot", "").rfind("gpu", 0) == 0) slots.push_back(w);
    }
    return slots.size() == 2;
  })) << listed.dump(1);
  std::set<std::string> pinned;
  for (const auto& s : slots) {
    pinned.insert(s["cuda_visible_devices"].get<std::string>());
    EXPECT_EQ(s["slot"], "gpu" + s["cuda_visible_devices"].get<std::string>());
    EXPECT_NE(s["pid"], supervisor.pid());  // each slot its own process
  }
  EXPECT_EQ(pinned, (std::set<std::string>{"0", "1"}));
  EXPECT_EQ(supervisor.stop(), 0);  // SIGTERM reaches the slots, which leave the worker list
  EXPECT_TRUE(eventually(10, [&] {
    const auto workers = env->http().get("/v1/workers").body.value("workers", nlohmann::json::array());
    for (const auto& w : workers) {
      if (w.value("slot", "").rfind("gpu", 0) == 0) return false;
    }
    return true;
  }));
}

// `kernelrl rollout --eval-service` against the in-process engine: the same scripted answers
// (concurrency 1, so each turn gets the same one) give the same statuses, correctness and records.
TEST_F(ServiceE2E, RolloutThroughTheServiceMatchesTheInProcessEngine) {
  using policy::testing::CannedReply;
  using policy::testing::completion_body;
  const std::vector<std::string> answers = {rollout::testing::kCorrect, rollout::testing::kOffByOne,
                                            "tests/ladder/host/abort.cpp", rollout::testing::kCorrect};
  auto run = [&](const fs::path& out, const std::vector<std::string>& extra) {
    policy::testing::ScriptedServer server;
    std::vector<CannedReply> replies;
    for (const auto& a : answers) {
      replies.push_back({200, completion_body(rollout::testing::host_answer(a, "a summary")), {}, ""});
    }
    server.script(replies);
    std::vector<std::string> args = {KERNELRL_BINARY, "rollout", "--tasks", rollout::testing::kTask, "--format", "host",
                                     "--trajectories", "2", "--turns", "2", "--concurrency", "1", "--base-url",
                                     server.base_url(), "--model", "m", "--out", out.string(), "--device", "cpu",
                                     "--trials", "2", "--warmup", "1", "--min-reps", "2", "--max-reps", "5"};
    args.insert(args.end(), extra.begin(), extra.end());
    common::RunLimits limits;
    limits.wall_time = std::chrono::milliseconds(300000);
    auto r = common::run_process(args, KERNELRL_SOURCE_DIR, {"KERNELRL_CACHE_DIR=" + (env->dir() / "cache").string()}, limits);
    EXPECT_TRUE(r && r->exit_code == 0) << (r ? r->output : r.error().message);
    std::vector<nlohmann::json> turns;
    for (const auto& line : rollout::testing::read_json_lines(out / "trajectories.jsonl")) {
      if (!line.contains("update")) turns.push_back(line);
    }
    std::sort(turns.begin(), turns.end(), [](const auto& a, const auto& b) {
      return std::pair(a["trajectory"].template get<int>(), a["turn"].template get<int>()) <
             std::pair(b["trajectory"].template get<int>(), b["turn"].template get<int>());
    });
    return turns;
  };
  const fs::path dir = env->dir() / "rollouts";
  auto local = run(dir / "in-process", {});
  auto served = run(dir / "service", {"--eval-service", "http://127.0.0.1:" + std::to_string(env->port()),
                                      "--eval-service-token-file", env->token_file().string()});
  ASSERT_EQ(local.size(), 4u);
  ASSERT_EQ(served.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& a = local[i]["result"];
    const auto& b = served[i]["result"];
    EXPECT_EQ(a["status"], b["status"]) << i;
    EXPECT_EQ(a["correct"], b["correct"]) << i;
    EXPECT_EQ(a["task"], b["task"]) << i;
    EXPECT_EQ(fs::path(a["candidate"].get<std::string>()).lexically_relative(dir / "in-process"),
              fs::path(b["candidate"].get<std::string>()).lexically_relative(dir / "service"))
        << i;
    EXPECT_EQ(a["rules"], b["rules"]) << i;
    // Inputs are random: the message agrees up to its numbers ("output 0: 64 of 16384 elements differ (...").
    const std::string ma = a["error"]["message"], mb = b["error"]["message"];
    EXPECT_EQ(ma.substr(0, ma.find('(')), mb.substr(0, mb.find('('))) << i;
    EXPECT_EQ(a["seeds"].size(), b["seeds"].size()) << i;  // the command's --trials reached the service
    EXPECT_EQ(local[i]["correct"], served[i]["correct"]) << i;
    EXPECT_EQ(local[i]["score"].get<double>() > 0, served[i]["score"].get<double>() > 0) << i;
  }
  EXPECT_EQ(local[0]["result"]["status"], "OK");
  EXPECT_EQ(local[1]["result"]["status"], "WRONG_OUTPUT");
  auto run_json = nlohmann::json::parse(read_text(dir / "service" / "run.json"));
  EXPECT_EQ(run_json["device"], "cpu");
}

// The environment outlives every test suite of the binary and is stopped at exit.
class EnvironmentTeardown : public ::testing::Environment {
 public:
  void TearDown() override { env.reset(); }
};
const auto* const kTeardown = ::testing::AddGlobalTestEnvironment(new EnvironmentTeardown);

}  // namespace
}  // namespace kernelrl::service::testing
