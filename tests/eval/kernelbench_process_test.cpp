// kernelbench candidates in a process of their own (EvalOptions::kernelbench_candidate_process,
// eval/kernelbench_runner.hpp), on the CPU: honest candidates of the corpus still score OK there,
// every kernelbench hack of the adversarial corpus still scores zero, what the candidate patches stays
// in its own interpreter (the reference is untouched, so a patcher is judged on its own outputs),
// wrong outputs are named as in process, and a non-contiguous or literal-argument call works.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/fs.hpp"
#include "eval/batch_file.hpp"
#include "engine_test_util.hpp"

namespace kernelrl::eval {
namespace {

using testing::source_path;

class KernelbenchProcessTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    EngineConfig config = testing::test_config("cpu");
    config.options.kernelbench_candidate_process = CandidateProcess::ALWAYS;  // the default, said here
    auto e = Engine::create(config);
    ASSERT_TRUE(e) << e.error().message;
    engine_ = std::move(*e);
  }
  static void TearDownTestSuite() {
    engine_.reset();
    std::filesystem::remove_all(testing::test_cache_dir());
  }

  static EvalJob job(const std::filesystem::path& task, const std::filesystem::path& candidate) {
    return EvalJob{task, candidate, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  }

  static EvalResult evaluate(const std::string& task, const std::filesystem::path& candidate) {
    auto r = engine_->evaluate(job(source_path(task), candidate));
    EXPECT_TRUE(r) << candidate << ": " << r.error().message;
    return r ? *r : EvalResult{};
  }

  // A kernelbench candidate written for one test, in the test's cache.
  static std::filesystem::path write(const std::string& name, const std::string& text) {
    auto dir = testing::test_cache_dir() / "kernelbench-process";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / name) << text;
    return dir / name;
  }

  static bool ran_apart(const EvalResult& r) {
    return r.isolation.contains("candidate_process") && r.isolation["candidate_process"].value("separate", false);
  }

  static inline std::unique_ptr<Engine> engine_;
  const std::string small_task_ = "tests/ladder/task_softmax_small.py";
};

// An honest corpus candidate (a C++ softmax of the rows, built by load_inline at module level, the
// way LLM-written candidates do it) with another ModelNew: `forward_body` uses its `softmax_cpu`.
std::string with_forward(const std::string& forward_body) {
  auto source = common::read_file(source_path("tests/kernelbench_corpus/cpu/softmax_small_loops.py"));
  EXPECT_TRUE(source) << source.error().message;
  const std::string text = source ? *source : std::string();
  return text.substr(0, text.find("class ModelNew")) + "class ModelNew(nn.Module):\n    def forward(self, x):\n" +
         forward_body;
}

TEST_F(KernelbenchProcessTest, HonestCorpusCandidatesScoreOkInTheirOwnProcess) {
  auto entries = read_batch_file(source_path("tests/kernelbench_corpus/manifest.json"));
  ASSERT_TRUE(entries) << entries.error().message;
  int n = 0;
  for (const auto& e : *entries) {
    if (e.device.value_or("cpu") != "cpu" || !e.expect || *e.expect != common::Status::OK) continue;
    ++n;
    auto r = engine_->evaluate(e.job);
    ASSERT_TRUE(r) << e.job.candidate << ": " << r.error().message;
    EXPECT_EQ(common::to_string(r->status), "OK") << e.job.candidate << ": " << r->error.message;
    EXPECT_TRUE(ran_apart(*r)) << r->isolation.dump();
    EXPECT_GT(r->speedup, 0);
    EXPECT_GT(r->isolation["candidate_process"].value("threads_between_calls", 0), 0) << r->isolation.dump();
    // The runner's start, step by step: what it did before the evaluation was known (started with
    // its child) and what it did on the evaluation's path; its files confined before any thread,
    // its operators recorded below Python.
    const auto& process = r->isolation["candidate_process"];
    EXPECT_TRUE(process.value("started_ahead", false)) << process.dump();
    EXPECT_TRUE(process.value("file_confinement", false)) << process.dump();
    EXPECT_TRUE(process.value("syscall_filter", false)) << process.dump();
    EXPECT_TRUE(process.value("op_record", false)) << process.dump();
    for (const char* step : {"context", "call_recorder", "torch_device", "extension_loaders"}) {
      EXPECT_GE(process["ahead_ms"].value(step, -1.0), 0.0) << step << ": " << process.dump();
    }
    for (const char* step : {"device", "init_inputs", "confinement"}) {
      EXPECT_GE(process["set_up_ms"].value(step, -1.0), 0.0) << step << ": " << process.dump();
    }
  }
  EXPECT_GE(n, 3);
}

// The candidate's interpreter computes under the reference's numerics: TF32 off for matmuls and
// cuDNN unless --allow-tf32 (torch's default turns it on for cuDNN, which put every published
// solution's PyTorch convolution ~1e-3 off the reference on the H100: WRONG_OUTPUT at KernelBench's
// 1e-4). A ModelNew that raises when its process has TF32 on fails without the setting.
TEST_F(KernelbenchProcessTest, TheCandidatesProcessComputesUnderTheReferencesNumerics) {
  const auto dir = std::filesystem::temp_directory_path() / "kernelrl-kb-numerics";
  std::filesystem::create_directories(dir);
  const auto candidate = dir / "numerics.py";
  std::ofstream(candidate) << with_forward(
      "        if torch.backends.cudnn.allow_tf32 or torch.backends.cuda.matmul.allow_tf32:\n"
      "            raise ValueError('TF32 is on in the candidate process, off for the reference')\n"
      "        return softmax_cpu.softmax_rows_cpu(x)\n");
  auto r = engine_->evaluate({source_path(small_task_), candidate, std::nullopt, std::nullopt, std::nullopt, std::nullopt});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(common::to_string(r->status), "OK") << r->error.message;
  EXPECT_TRUE(ran_apart(*r));
  EXPECT_EQ(r->isolation["candidate_process"].value("allow_tf32", true), false) << r->isolation.dump();
}

// Every kernelbench hack of the adversarial corpus scores zero apart too (some by another status:
// a patcher of torch or of the task now changes only its own interpreter, so its outputs are wrong).
TEST_F(KernelbenchProcessTest, AdversarialKernelbenchCandidatesScoreZero) {
  auto entries = read_batch_file(source_path("tests/adversarial/adversarial.json"));
  ASSERT_TRUE(entries) << entries.error().message;
  const auto honest = source_path("tests/kernelbench_corpus/cpu/softmax_small_loops.py");
  int n = 0;
  for (const auto& e : *entries) {
    if (e.job.candidate.extension() != ".py" || e.device.value_or("cpu") != "cpu") continue;
    ++n;
    auto r = engine_->evaluate(e.job);
    ASSERT_TRUE(r) << e.job.candidate << ": " << r.error().message;
    EXPECT_NE(r->status, common::Status::OK) << e.job.candidate;
    EXPECT_EQ(r->speedup, 0) << e.job.candidate;
    EXPECT_FALSE(r->error.message.empty()) << e.job.candidate;
    std::printf("%-40s %s\n", e.job.candidate.filename().c_str(), std::string(common::to_string(r->status)).c_str());
  }
  EXPECT_GE(n, 10);
  EvalResult after = evaluate(small_task_, honest);  // each hack's runner died with its evaluation
  EXPECT_EQ(after.status, common::Status::OK) << after.error.message;
  EXPECT_TRUE(ran_apart(after));
}

// torch.softmax replaced in the candidate's interpreter reaches no reference: the candidate's zeros
// are compared with the true softmax (no tamper message: nothing came into the child's interpreter).
TEST_F(KernelbenchProcessTest, APatchOfTorchStaysInTheCandidatesInterpreter) {
  EvalResult r = evaluate(small_task_, source_path("tests/adversarial/kernelbench/patches_the_reference_cpu.py"));
  EXPECT_EQ(r.status, common::Status::WRONG_OUTPUT) << r.error.message;
  EXPECT_EQ(r.error.message.find("changed the interpreter"), std::string::npos) << r.error.message;
  EXPECT_TRUE(ran_apart(r));
}

TEST_F(KernelbenchProcessTest, WrongOutputsAreNamedAsInProcess) {
  const auto wrong_shape = write("wrong_shape.py", with_forward("        return softmax_cpu.softmax_rows_cpu(x)[:, :128]\n"));
  EvalResult shape = evaluate(small_task_, wrong_shape);
  EXPECT_EQ(shape.status, common::Status::WRONG_OUTPUT) << shape.error.message;
  EXPECT_NE(shape.error.message.find("has shape [64, 128], expected [64, 256]"), std::string::npos)
      << shape.error.message;
  const auto two = write("two_outputs.py", with_forward("        y = softmax_cpu.softmax_rows_cpu(x)\n        return y, y\n"));
  EvalResult count = evaluate(small_task_, two);
  EXPECT_EQ(count.status, common::Status::WRONG_OUTPUT) << count.error.message;
  EXPECT_NE(count.error.message.find("returned 2 outputs, expected 1"), std::string::npos) << count.error.message;
  const auto dtype = write("wrong_dtype.py", with_forward("        return softmax_cpu.softmax_rows_cpu(x).to(torch.float64)\n"));
  EvalResult dt = evaluate(small_task_, dtype);
  EXPECT_EQ(dt.status, common::Status::WRONG_OUTPUT) << dt.error.message;
  EXPECT_NE(dt.error.message.find("has dtype float64, expected float32"), std::string::npos) << dt.error.message;
  const auto raises = write("raises.py", R"PY(import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        raise ValueError("no kernel yet")
)PY");
  EvalResult raised = evaluate(small_task_, raises);
  EXPECT_EQ(raised.status, common::Status::RUNTIME_ERROR) << raised.error.message;
  EXPECT_NE(raised.error.message.find("no kernel yet"), std::string::npos) << raised.error.message;
}

// An output that is a transposed view (computed on the transposed input) is copied out whole.
TEST_F(KernelbenchProcessTest, ANonContiguousOutputIsAccepted) {
  const auto transposed = write("transposed_output.py", with_forward(
      "        y = torch.empty(x.shape[1], x.shape[0], dtype=x.dtype).t()\n"
      "        y.copy_(softmax_cpu.softmax_rows_cpu(x))\n"
      "        return y\n"));
  EvalResult r = evaluate(small_task_, transposed);
  EXPECT_EQ(r.status, common::Status::OK) << r.error.message;
  EXPECT_TRUE(ran_apart(r));
}

// A call whose tensors pass the child's 64 MB file-size limit (two 32 MB inputs and a 32 MB output:
// a memory file of ~190 MB shared with the runner) is evaluated, not refused: the child sizes that
// file before it confines itself (sandbox::with_file_size_limit_lifted). It was REJECTED for writing
// "more than 64 MB" before (examples/vector_add on the CPU, twenty-second session).
TEST_F(KernelbenchProcessTest, ACallsTensorsPastTheFileSizeLimitAreEvaluated) {
  const auto task = write("vector_add_32mb_task.py",
                          "import torch\nimport torch.nn as nn\n\n"
                          "class Model(nn.Module):\n    def forward(self, A, B):\n        return A + B\n\n"
                          "def get_inputs():\n    return [torch.randn(2048, 4096), torch.randn(2048, 4096)]\n\n"
                          "def get_init_inputs():\n    return []\n");
  auto r = engine_->evaluate(job(task, source_path("examples/vector_add/kernelbench_cpu.py")));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, common::Status::OK) << r->error.message;
  EXPECT_TRUE(ran_apart(*r));
  EXPECT_TRUE(r->isolation["candidate_process"].value("file_size_limit", false)) << r->isolation.dump();
}

}  // namespace
}  // namespace kernelrl::eval
