// A batch spread over several engines (eval/engine_set.hpp), as `kernelrl eval --batch --gpus`
// runs one per GPU, shown on the CPU: each engine's processes see its own CUDA_VISIBLE_DEVICES, every
// job gets exactly one result, in job order, and the verdicts are what one engine gives.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "common/fs.hpp"
#include "eval/engine_set.hpp"
#include "engine_test_util.hpp"

namespace kernelrl::eval {
namespace {

using testing::source_path;

// The correct host ladder candidate, made to fail (return 9) unless CUDA_VISIBLE_DEVICES is `gpu`.
std::filesystem::path candidate_pinned_to(const std::filesystem::path& dir, const std::string& gpu) {
  auto source = common::read_file(source_path("tests/ladder/host/correct.cpp"));
  EXPECT_TRUE(source);
  std::string text = *source;
  const std::string marker = "(void)params; (void)n_params; (void)stream;";
  EXPECT_NE(text.find(marker), std::string::npos);
  text.replace(text.find(marker), marker.size(),
               marker + "\n  const char* v = std::getenv(\"CUDA_VISIBLE_DEVICES\");"
                        "\n  if (!v || std::strcmp(v, \"" + gpu + "\") != 0) return 9;");
  text.replace(text.find("#include <cmath>"), 16, "#include <cmath>\n#include <cstdlib>\n#include <cstring>");
  const auto path = dir / ("needs_gpu_" + gpu + ".cpp");
  std::ofstream(path) << text;
  return path;
}

TEST(EngineSet, JobsSpreadOverEnginesEachPinnedToItsGpu) {
  auto dir = common::make_temp_dir(std::filesystem::temp_directory_path(), "kernelrl-engine-set-");
  ASSERT_TRUE(dir);
  const auto pinned = candidate_pinned_to(*dir, "7");
  std::vector<std::unique_ptr<Engine>> engines;
  for (const char* gpu : {"7", "8"}) {
    auto config = testing::test_config("cpu");
    config.gpu = gpu;
    config.n_workers = 1;
    config.n_compile_threads = 1;
    auto engine = Engine::create(config);
    ASSERT_TRUE(engine) << engine.error().message;
    engines.push_back(std::move(*engine));
  }
  const auto task = source_path("tests/ladder/task_softmax_small.py");
  std::vector<EvalJob> jobs;
  std::vector<std::string> kinds;
  for (int i = 0; i < 4; ++i) {
    jobs.push_back({task, pinned, std::nullopt, std::nullopt});
    kinds.push_back("pinned");
    jobs.push_back({task, source_path(i % 2 ? "tests/ladder/host/off_by_one.cpp" : "tests/ladder/host/correct.cpp"),
                    std::nullopt, std::nullopt});
    kinds.push_back(i % 2 ? "off_by_one" : "correct");
  }
  std::vector<std::size_t> engine_of(jobs.size(), 99);
  std::vector<std::size_t> order;
  auto results = evaluate_spread({engines[0].get(), engines[1].get()}, jobs,
                                 [&](std::size_t i, std::size_t on, const common::Expected<EvalResult>&) {
                                   engine_of[i] = on;
                                   order.push_back(i);
                                 });
  ASSERT_EQ(results.size(), jobs.size());
  EXPECT_EQ(std::set<std::size_t>(order.begin(), order.end()).size(), jobs.size()) << "one callback per job";
  std::set<std::size_t> used;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    ASSERT_TRUE(results[i]) << results[i].error().message;
    ASSERT_LT(engine_of[i], 2u);
    used.insert(engine_of[i]);
    EXPECT_EQ(results[i]->candidate, jobs[i].candidate.string()) << "results come back in job order";
    std::string expected = "OK";
    if (kinds[i] == "off_by_one") expected = "WRONG_OUTPUT";
    if (kinds[i] == "pinned" && engine_of[i] == 1) expected = "RUNTIME_ERROR";  // engine 1 sees "8"
    EXPECT_EQ(common::to_string(results[i]->status), expected) << kinds[i] << " on engine " << engine_of[i] << ": "
                                                             << results[i]->error.message;
  }
  EXPECT_EQ(used.size(), 2u) << "both engines took jobs";
  std::filesystem::remove_all(*dir);
}

TEST(EngineSet, OneEngineIsItsOwnBatch) {
  auto engine = Engine::create(testing::test_config("cpu"));
  ASSERT_TRUE(engine) << engine.error().message;
  const auto task = source_path("tests/ladder/task_softmax_small.py");
  std::vector<EvalJob> jobs{{task, source_path("tests/ladder/host/correct.cpp"), std::nullopt, std::nullopt},
                            {task, source_path("tests/ladder/host/abort.cpp"), std::nullopt, std::nullopt}};
  int calls = 0;
  auto results = evaluate_spread({engine->get()}, jobs, [&](std::size_t, std::size_t on, const common::Expected<EvalResult>&) {
    EXPECT_EQ(on, 0u);
    ++calls;
  });
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(calls, 2);
  ASSERT_TRUE(results[0] && results[1]);
  EXPECT_EQ(common::to_string(results[0]->status), "OK");
  EXPECT_EQ(common::to_string(results[1]->status), "RUNTIME_ERROR");
  EXPECT_FALSE(evaluate_spread({}, jobs)[0].ok());
}

}  // namespace
}  // namespace kernelrl::eval
