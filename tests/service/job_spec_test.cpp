// What a client may submit: every bad job gets a 4xx naming the field; a task-set path is resolved
// to its text and manifest entry and cannot leave its folder; the stored form round-trips.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <vector>

#include "service/job_spec.hpp"
#include "service/task_sets.hpp"

namespace kernelrl::service {
namespace {

namespace fs = std::filesystem;

TaskSets source_task_sets() {
  TaskSets sets;
  EXPECT_TRUE(sets.add(std::string(KERNELRL_SOURCE_DIR) + "/tasks").ok());
  EXPECT_TRUE(sets.add("service=" + std::string(KERNELRL_SOURCE_DIR) + "/tests/service/data").ok());
  return sets;
}

nlohmann::json host_job() {
  return {{"task", "service/task_add.py"}, {"candidate", "int x;"}, {"format", "host"}};
}

// A service that takes tasks as text too (serve --allow-task-source).
JobLimits with_task_source() {
  JobLimits limits;
  limits.allow_task_source = true;
  return limits;
}

RequestError error_of(const nlohmann::json& j) {
  auto r = parse_job_request(j, "jobs[2]", source_task_sets(), with_task_source());
  EXPECT_TRUE(std::holds_alternative<RequestError>(r)) << j.dump();
  return std::holds_alternative<RequestError>(r) ? std::get<RequestError>(r) : RequestError{0, ""};
}

void expect_error(const nlohmann::json& j, int status, const std::string& fragment) {
  RequestError e = error_of(j);
  EXPECT_EQ(e.http_status, status) << e.message;
  EXPECT_NE(e.message.find(fragment), std::string::npos) << "message: " << e.message << "\nexpected: " << fragment;
}

TEST(JobSpec, AValidJobResolvesItsTaskAndKeepsEverythingItWasGiven) {
  nlohmann::json j = host_job();
  j["options"] = {{"n_trials", 2}, {"time_kernels", false}};
  j["client_id"] = "run-7/turn-3";
  j["rules"] = "kernelbench";
  auto r = parse_job_request(j, "job", source_task_sets(), JobLimits{});
  ASSERT_TRUE(std::holds_alternative<JobSpec>(r)) << std::get<RequestError>(r).message;
  const JobSpec& s = std::get<JobSpec>(r);
  EXPECT_EQ(s.task_name, "service/task_add.py");
  EXPECT_NE(s.task_source.find("def get_inputs"), std::string::npos);
  EXPECT_TRUE(s.task_manifest.is_null());  // no manifest.json beside it
  EXPECT_EQ(s.candidate_name, "candidate.cpp");
  EXPECT_EQ(s.format, common::Format::HOST);
  EXPECT_EQ(s.rules, common::RuleSet::KERNELBENCH);
  EXPECT_EQ(s.client_id, "run-7/turn-3");

  auto back = from_stored(to_stored(s));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->task_source, s.task_source);
  EXPECT_EQ(back->candidate_source, "int x;");
  EXPECT_EQ(back->options, s.options);
  EXPECT_EQ(back->rules, s.rules);
  EXPECT_TRUE(back->task_from_set);  // resolved from a task set: the worker loads it as trusted code
}

// Only the service marks a task as one of its task sets' (the worker then trusts its code): a client
// cannot claim it, and a stored job without the mark, or with anything but true, is a client's task.
TEST(JobSpec, OnlyATaskResolvedFromATaskSetIsMarkedTrusted) {
  nlohmann::json by_text = {{"task_source", "import torch"}, {"candidate", "x"}, {"format", "host"}};
  auto r = parse_job_request(by_text, "job", source_task_sets(), with_task_source());
  ASSERT_TRUE(std::holds_alternative<JobSpec>(r)) << std::get<RequestError>(r).message;
  EXPECT_FALSE(std::get<JobSpec>(r).task_from_set);
  nlohmann::json stored = to_stored(std::get<JobSpec>(r));
  EXPECT_FALSE(stored.contains("task_from_set"));
  for (const nlohmann::json& mark : {nlohmann::json("true"), nlohmann::json(1), nlohmann::json(nullptr)}) {
    stored["task_from_set"] = mark;
    auto back = from_stored(stored);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_FALSE(back->task_from_set) << mark.dump();
  }
  by_text["task_from_set"] = true;
  auto claimed = parse_job_request(by_text, "job", source_task_sets(), with_task_source());
  ASSERT_TRUE(std::holds_alternative<RequestError>(claimed)) << "a client marked its own task trusted";
  EXPECT_EQ(std::get<RequestError>(claimed).http_status, 400);
  EXPECT_NE(std::get<RequestError>(claimed).message.find("task_from_set"), std::string::npos)
      << std::get<RequestError>(claimed).message;
}

TEST(JobSpec, ATaskOfAManifestCarriesItsEntry) {
  auto r = parse_job_request({{"task", "tasks/level1/002_relu.py"}, {"candidate", "x"}, {"format", "native"}}, "job",
                             source_task_sets(), JobLimits{});
  ASSERT_TRUE(std::holds_alternative<JobSpec>(r)) << std::get<RequestError>(r).message;
  const JobSpec& s = std::get<JobSpec>(r);
  EXPECT_EQ(s.task_manifest["level"], 1);
  EXPECT_EQ(s.task_manifest["entry"]["file"], "002_relu.py");
  EXPECT_GT(s.task_manifest["entry"]["min_bytes"].get<double>(), 0);
}

// "size": the task at a size of its manifest entry, as `kernelrl eval --size` makes it (the
// constants replaced, no speed of light); a size the entry lacks is a 400 naming the sizes it has;
// a task in no manifest keeps its own size.
TEST(JobSpec, AJobAsksForASizeOfItsTask) {
  nlohmann::json j = {{"task", "tasks/level1/002_relu.py"}, {"candidate", "x"}, {"format", "host"}, {"size", "small"}};
  auto r = parse_job_request(j, "job", source_task_sets(), JobLimits{});
  ASSERT_TRUE(std::holds_alternative<JobSpec>(r)) << std::get<RequestError>(r).message;
  const JobSpec& s = std::get<JobSpec>(r);
  EXPECT_EQ(s.task_name, "tasks/level1/002_relu.py");
  EXPECT_NE(s.task_source.find("\nbatch_size = 1024"), std::string::npos) << s.task_source;
  EXPECT_NE(s.task_source.find("\ndim = 1024"), std::string::npos) << s.task_source;
  EXPECT_EQ(s.task_source.find("32768\n"), std::string::npos) << s.task_source;
  EXPECT_EQ(s.task_manifest["entry"]["min_bytes"], 0);
  EXPECT_TRUE(s.task_manifest["entry"]["sizes"].empty());

  j["size"] = "full";
  auto full = parse_job_request(j, "job", source_task_sets(), JobLimits{});
  ASSERT_TRUE(std::holds_alternative<JobSpec>(full));
  EXPECT_NE(std::get<JobSpec>(full).task_source.find("\ndim = 32768"), std::string::npos);

  j["size"] = "tiny";
  expect_error(j, 400, "jobs[2].size: tasks/level1/002_relu.py has no size 'tiny' (its sizes: full, small)");
  j["size"] = 3;
  expect_error(j, 400, "jobs[2].size: must be a string");

  nlohmann::json own = host_job();
  own["size"] = "small";
  auto kept = parse_job_request(own, "job", source_task_sets(), JobLimits{});
  ASSERT_TRUE(std::holds_alternative<JobSpec>(kept));
  EXPECT_EQ(std::get<JobSpec>(kept).task_source, std::get<JobSpec>(parse_job_request(host_job(), "job", source_task_sets(),
                                                                                     JobLimits{})).task_source);
}

TEST(JobSpec, TheFormatComesFromTheCandidateNameWhenNotGiven) {
  nlohmann::json j = host_job();
  j.erase("format");
  j["candidate_name"] = "runs/x/turn1.cu";
  auto r = parse_job_request(j, "job", source_task_sets(), JobLimits{});
  ASSERT_TRUE(std::holds_alternative<JobSpec>(r));
  EXPECT_EQ(std::get<JobSpec>(r).format, common::Format::NATIVE);
  EXPECT_EQ(std::get<JobSpec>(r).candidate_name, "runs/x/turn1.cu");
}

// A valid job changed by `edit`: the status and the message fragment it must get.
struct BadJob {
  std::function<void(nlohmann::json&)> edit;
  int status;
  std::string fragment;
};

TEST(JobSpec, BadJobsAre4xxNamingTheField) {
  const std::vector<BadJob> cases = {
      {[](auto& j) { j["candidat"] = "x"; }, 400, "jobs[2].candidat: unknown field"},
      {[](auto& j) { j.erase("candidate"); }, 400, "jobs[2].candidate: missing"},
      {[](auto& j) { j["candidate"] = 42; }, 400, "jobs[2].candidate: must be a string"},
      {[](auto& j) { j["format"] = "cuda"; }, 400, "jobs[2].format: 'cuda' is not one of native, host, kernelbench"},
      {[](auto& j) { j.erase("format"); }, 400, "jobs[2].format: missing"},
      {[](auto& j) { j["rules"] = "lenient"; }, 400, "jobs[2].rules: 'lenient'"},
      {[](auto& j) { j["device"] = "tpu"; }, 400, "jobs[2].device: 'tpu'"},
      {[](auto& j) { j.erase("task"); }, 400, "jobs[2]: missing \"task\""},
      {[](auto& j) { j["task_source"] = "import torch"; }, 400, "either \"task\""},
      {[](auto& j) { j["client_id"] = "has space"; }, 400, "jobs[2].client_id"},
      {[](auto& j) { j["candidate"] = std::string((16u << 20) + 1, 'x'); }, 413,
       "jobs[2].candidate: 16777217 bytes, over the 16777216-byte limit"},
  };
  expect_error(nlohmann::json::array(), 400, "jobs[2]: must be an object");
  for (const auto& c : cases) {
    auto j = host_job();
    c.edit(j);
    expect_error(j, c.status, c.fragment);
  }
}

TEST(JobSpec, OptionsAreCheckedByNameTypeAndRange) {
  auto with_options = [](nlohmann::json o) {
    auto j = host_job();
    j["options"] = std::move(o);
    return j;
  };
  expect_error(with_options({{"n_trails", 3}}), 400, "jobs[2].options.n_trails: not an option a job may set");
  expect_error(with_options({{"defenses", false}}), 400, "jobs[2].options.defenses: not an option a job may set (not settable");
  expect_error(with_options({{"device", "cpu"}}), 400, "set the job's own \"device\"");
  expect_error(with_options({{"n_trials", 0}}), 400, "jobs[2].options.n_trials: 0 is outside [1, 100]");
  expect_error(with_options({{"n_trials", 2.5}}), 400, "jobs[2].options.n_trials: must be a whole number");
  expect_error(with_options({{"timeout_timing_s", 1e9}}), 400, "jobs[2].options.timeout_timing_s");
  expect_error(with_options({{"time_kernels", "no"}}), 400, "jobs[2].options.time_kernels: must be true or false");
  expect_error(with_options(nlohmann::json::array()), 400, "jobs[2].options: must be an object");
  expect_error(with_options({{"precision", "fp8"}}), 400, "jobs[2].options.precision: \"fp8\" is not one of");
  expect_error(with_options({{"precision", 16}}), 400, "jobs[2].options.precision: 16 is not one of");
  for (const char* precision : {"bf16", ""}) {  // "": the task's own dtypes (what clients sending every option send)
    auto r = parse_job_request(with_options({{"precision", precision}}), "job", source_task_sets(), JobLimits{});
    ASSERT_TRUE(std::holds_alternative<JobSpec>(r)) << std::get<RequestError>(r).message;
    EXPECT_EQ(std::get<JobSpec>(r).options["precision"], precision);
  }
}

TEST(JobSpec, ATaskPathStaysInsideItsTaskSet) {
  auto j = host_job();
  j["task"] = "service/../../../CMakeLists.txt";
  expect_error(j, 404, "leaves its task set's folder");
  j["task"] = "nosuchset/x.py";
  expect_error(j, 404, "'nosuchset/x.py' is not in a task set of this service (task sets: tasks, service");
  j["task"] = "service/missing.py";
  expect_error(j, 404, "'service/missing.py': no such task file");
  j["task"] = "service";
  expect_error(j, 404, "names a task set, not a task file");
}

TEST(JobSpec, ATaskSourceMayCarryAManifestEntryWhichIsChecked) {
  nlohmann::json j = {{"task_source", "import torch"}, {"task_name", "mine/relu.py"}, {"candidate", "x"}, {"format", "host"},
                      {"task_manifest", {{"level", 1}, {"split", "test"}, {"flops", 10}, {"min_bytes", 20}}}};
  auto r = parse_job_request(j, "job", TaskSets{}, with_task_source());
  ASSERT_TRUE(std::holds_alternative<JobSpec>(r)) << std::get<RequestError>(r).message;
  EXPECT_EQ(std::get<JobSpec>(r).task_manifest["entry"]["file"], "relu.py");
  j["task_manifest"]["split"] = "val";
  expect_error(j, 400, "jobs[2].task_manifest: 'split' is 'val'");
  j["task_manifest"] = {{"split", "test"}};
  expect_error(j, 400, "jobs[2].task_manifest: must be the task's manifest.json entry with its integer \"level\"");
  j.erase("task_manifest");
  j["task_name"] = "relu.txt";
  expect_error(j, 400, "jobs[2].task_name: 'relu.txt' must end in .py");
}

// A task is Python the workers run: as text only where the service was told to take it.
TEST(JobSpec, ByDefaultAServiceTakesTasksByPathOnly) {
  const JobLimits limits;
  auto by_text = parse_job_request({{"task_source", "import os"}, {"candidate", "x"}, {"format", "host"}}, "job",
                                   source_task_sets(), limits);
  ASSERT_TRUE(std::holds_alternative<RequestError>(by_text));
  EXPECT_EQ(std::get<RequestError>(by_text).http_status, 403);
  EXPECT_NE(std::get<RequestError>(by_text).message.find("job.task_source: this service takes tasks from this token by task-set path only"),
            std::string::npos);
  EXPECT_NE(std::get<RequestError>(by_text).message.find("serve --allow-task-source"), std::string::npos);
  EXPECT_NE(std::get<RequestError>(by_text).message.find("TOKEN task_source"), std::string::npos);
  EXPECT_TRUE(std::holds_alternative<JobSpec>(parse_job_request(host_job(), "job", source_task_sets(), limits)));
  EXPECT_TRUE(std::holds_alternative<JobSpec>(
      parse_job_request({{"task_source", "import os"}, {"candidate", "x"}, {"format", "host"}}, "job", source_task_sets(),
                        with_task_source())));
}

TEST(TaskSets, RegistrationErrorsNameTheArgument) {
  TaskSets sets;
  auto missing = sets.add("/no/such/folder");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("'/no/such/folder' is not a folder"), std::string::npos);
  ASSERT_TRUE(sets.add(std::string(KERNELRL_SOURCE_DIR) + "/tasks"));
  auto twice = sets.add(std::string(KERNELRL_SOURCE_DIR) + "/tasks");
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message.find("two task sets named 'tasks'"), std::string::npos);
}

TEST(TaskSets, TheListingNamesEveryTaskWithItsManifest) {
  auto listing = source_task_sets().listing();
  ASSERT_TRUE(listing) << listing.error().message;
  const auto& sets = (*listing)["task_sets"];
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0]["name"], "tasks");
  EXPECT_GE(sets[0]["n_tasks"].get<int>(), 200);
  bool found = false;
  for (const auto& t : sets[0]["tasks"]) {
    if (t["task"] == "tasks/level1/002_relu.py") {
      found = true;
      EXPECT_EQ(t["level"], 1);
      EXPECT_EQ(t["split"], "train");
    }
  }
  EXPECT_TRUE(found);
}

// Only task files are tasks: a candidate, a manifest or a helper module in a task set is not one.
TEST(TaskSets, OnlyTaskFilesResolve) {
  const TaskSets sets = source_task_sets();
  EXPECT_TRUE(sets.resolve("service/task_add.py", "job.task"));
  for (const char* not_a_task : {"service/add_ok.cpp", "tasks/level1/manifest.json"}) {
    auto r = sets.resolve(not_a_task, "job.task");
    ASSERT_FALSE(r) << not_a_task;
    EXPECT_NE(r.error().message.find("is not a task file"), std::string::npos) << r.error().message;
  }
}

// One folder's broken manifest costs that folder's details, not the whole listing (once a 500).
TEST(TaskSets, ABrokenManifestIsNamedInTheListingNotFatal) {
  const fs::path dir = fs::temp_directory_path() / ("kernelrl-task-sets-" + std::to_string(::getpid()));
  fs::create_directories(dir / "good");
  fs::create_directories(dir / "broken");
  fs::copy_file(std::string(KERNELRL_SOURCE_DIR) + "/tests/service/data/task_add.py", dir / "good/add.py");
  fs::copy_file(std::string(KERNELRL_SOURCE_DIR) + "/tests/service/data/task_add.py", dir / "broken/add.py");
  std::ofstream(dir / "broken/manifest.json") << R"([{"file": "add.py"}])";  // no level, no split
  TaskSets sets;
  ASSERT_TRUE(sets.add("mine=" + dir.string()));
  auto listing = sets.listing();
  fs::remove_all(dir);
  ASSERT_TRUE(listing) << listing.error().message;
  const auto& tasks = (*listing)["task_sets"][0]["tasks"];
  ASSERT_EQ(tasks.size(), 2u) << listing->dump();
  EXPECT_EQ(tasks[0]["task"], "mine/broken/add.py");
  EXPECT_TRUE(tasks[0].contains("manifest_error")) << tasks[0].dump();
  EXPECT_FALSE(tasks[1].contains("manifest_error")) << tasks[1].dump();
}

}  // namespace
}  // namespace kernelrl::service
