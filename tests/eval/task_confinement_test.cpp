// A task nobody vouched for (EngineConfig::untrusted_task_folders: the service's tasks sent as
// text) is loaded only by a fresh child that confined its files first (eval/child_task_confinement.hpp):
// its module's code can read neither /etc/passwd nor write outside the child's scratch folder, where
// the same file outside those folders can (what the confinement takes away), and honest tasks there
// are evaluated as anywhere else, in each format. Built for the CPU and, labelled gpu, for CUDA.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine_test_util.hpp"

namespace kernelrl::eval {
namespace {

namespace fs = std::filesystem;
using testing::source_path;

// A task whose module tries each access and raises with what it found.
std::string probe_task(const fs::path& outside) {
  return R"PY(import os

import torch
import torch.nn as nn


def _try(action):
    try:
        action()
        return "allowed"
    except OSError as e:
        return type(e).__name__


def _write(path):
    with open(path, "w") as f:
        f.write("planted by a task")


def _write_and_remove(path):
    _write(path)
    os.remove(path)


READ = _try(lambda: open("/etc/passwd").read())
WRITE = _try(lambda: _write(r")PY" +
         outside.string() + R"PY("))
SCRATCH = _try(lambda: _write_and_remove("probe-in-scratch"))  # the current folder
raise RuntimeError(f"probe read={READ} write={WRITE} scratch={SCRATCH}")
)PY";
}

class TaskConfinementTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = testing::test_cache_dir() / "task-confinement";
    fs::create_directories(root_ / "untrusted");
    fs::create_directories(root_ / "trusted");
    EngineConfig config = testing::test_config(KERNELRL_TEST_DEVICE);
    config.untrusted_task_folders = {root_ / "untrusted"};
    auto e = Engine::create(config);
    ASSERT_TRUE(e) << e.error().message;
    engine_ = std::move(*e);
  }
  static void TearDownTestSuite() {
    engine_.reset();
    fs::remove_all(testing::test_cache_dir());
  }

  // `source` written as FOLDER/NAME below this suite's root.
  static fs::path task_in(const std::string& folder, const std::string& name, const std::string& source) {
    const fs::path file = root_ / folder / name;
    std::ofstream(file) << source;
    return file;
  }

  static bool cuda() { return std::string(KERNELRL_TEST_DEVICE) == "cuda"; }
  // The ladder's softmax task for this device and its honest candidates.
  static std::string task() { return cuda() ? "tests/ladder/task_softmax.py" : "tests/ladder/task_softmax_small.py"; }
  static std::vector<std::string> honest() {
    if (cuda()) return {"tests/ladder/native/correct_fast.cu"};
    return {"tests/ladder/host/correct.cpp", "tests/kernelbench_corpus/cpu/softmax_small_loops.py"};
  }

  static inline fs::path root_;
  static inline std::unique_ptr<Engine> engine_;
};

TEST_F(TaskConfinementTest, AnUntrustedTasksCodeReadsNoHostFileAndWritesOnlyItsScratch) {
  const fs::path outside = root_ / "planted.txt";
  const std::string source = probe_task(outside);
  const std::string candidate = source_path(honest().front());
  auto confined = engine_->evaluate({task_in("untrusted", "probe.py", source), candidate, std::nullopt, std::nullopt});
  ASSERT_FALSE(confined) << "a task that raises at import was evaluated";
  EXPECT_NE(confined.error().message.find("probe read=PermissionError write=PermissionError scratch=allowed"),
            std::string::npos)
      << confined.error().message;
  EXPECT_FALSE(fs::exists(outside));
  // The same file as a trusted task: every access allowed, so the test above can fail.
  auto trusted = engine_->evaluate({task_in("trusted", "probe.py", source), candidate, std::nullopt, std::nullopt});
  ASSERT_FALSE(trusted);
  EXPECT_NE(trusted.error().message.find("probe read=allowed write=allowed scratch=allowed"), std::string::npos)
      << trusted.error().message;
  EXPECT_TRUE(fs::exists(outside));
  fs::remove(outside);
}

TEST_F(TaskConfinementTest, AnHonestUntrustedTaskIsEvaluatedAsATrustedOne) {
  auto task_source = common::read_file(source_path(task()));
  ASSERT_TRUE(task_source);
  const fs::path untrusted = task_in("untrusted", fs::path(task()).filename().string(), *task_source);
  auto info = engine_->task_info(untrusted);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_GT(info->ref_runtime.median_us, 0);
  for (const auto& c : honest()) {
    auto r = engine_->evaluate({untrusted, source_path(c), std::nullopt, std::string(KERNELRL_TEST_DEVICE)});
    ASSERT_TRUE(r) << c << ": " << r.error().message;
    EXPECT_EQ(r->status, common::Status::OK) << c << ": " << r->error.message;
    EXPECT_TRUE(r->isolation.value("task_confinement", false)) << c << ": " << r->isolation.dump();
  }
  // A trusted task is loaded by the worker as before: no such layer.
  auto trusted = engine_->evaluate({source_path(task()), source_path(honest().front()), std::nullopt,
                                    std::string(KERNELRL_TEST_DEVICE)});
  ASSERT_TRUE(trusted) << trusted.error().message;
  EXPECT_FALSE(trusted->isolation.contains("task_confinement")) << trusted->isolation.dump();
}

}  // namespace
}  // namespace kernelrl::eval
