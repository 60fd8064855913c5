// The format reward's markers, including on answers long enough to have overflowed a recursive
// regex matcher (std::regex) on a worker thread.
#include "train/format_reward.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "rollout/prompt.hpp"

namespace kernelrl::train {
namespace {

const std::string kAllMarkers = R"(#include <kernelrl/abi.h>
__global__ void add_one(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] += 1; }
extern "C" int kernelrl_forward(const kernelrl_tensor* in, int n_in, kernelrl_tensor* out, int n_out) {
  add_one<<<1, 32>>>(out[0].data, 32);
  return 0;
})";

TEST(FormatReward, CountsEachMarker) {
  EXPECT_DOUBLE_EQ(format_marker_fraction(""), 0.0);
  EXPECT_DOUBLE_EQ(format_marker_fraction("int main() { return 0; }"), 0.0);
  EXPECT_DOUBLE_EQ(format_marker_fraction("__global__ void k() {}"), 0.25);
  EXPECT_DOUBLE_EQ(format_marker_fraction("#include <kernelrl/abi.h>\n__global__ void k() {}"), 0.5);
  EXPECT_DOUBLE_EQ(format_marker_fraction(kAllMarkers), 1.0);
  // extern "C" must reach kernelrl_forward before a ';' or '{'.
  EXPECT_DOUBLE_EQ(format_marker_fraction("extern \"C\" int f(); int kernelrl_forward("), 0.0);
}

// The scanner against the markers as regular expressions (std::regex is fine on short strings),
// on random strings made of the markers' pieces.
TEST(FormatReward, AgreesWithTheMarkersAsRegularExpressions) {
  const std::regex markers[] = {
      std::regex(R"(__global__\s+void\s+\w+\s*\()"),
      std::regex(R"(extern\s+"C"[^;{]*kernelrl_forward\s*\()"),
      std::regex(R"(\w+\s*<<<[^>]+>>>\s*\()"),
      std::regex(R"(#include\s*<kernelrl/abi\.h>)"),
  };
  const std::vector<std::string> pieces = {"__global__", "void", "extern", "\"C\"", "kernelrl_forward", "<<<", ">>>",
                                           ">", "<", "(", ")", ";", "{", " ", "\n", "\t", "k", "x1", "#include",
                                           "<kernelrl/abi.h>", "int", ",", "__global__ void k("};
  std::mt19937 rng(7);
  int n_positive = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string code;
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) code += pieces[rng() % pieces.size()];
    int expected = 0;
    for (const auto& m : markers) expected += std::regex_search(code, m) ? 1 : 0;
    n_positive += expected > 0;
    ASSERT_DOUBLE_EQ(format_marker_fraction(code), expected / 4.0) << "code: [" << code << "]";
  }
  EXPECT_GT(n_positive, 1000);  // the pieces do form markers often enough to test both ways
}

TEST(FormatReward, LongDegenerateAnswersOnAWorkerThreadAreScored) {
  // 2 MB inside `[^;{]*` and `[^>]+`: std::regex needed hundreds of bytes of stack per character.
  const std::string junk(2'000'000, 'a');
  double open_extern = -1, open_launch = -1, markers_after_junk = -1;
  std::thread t([&] {
    open_extern = format_marker_fraction("extern \"C\" " + junk);
    open_launch = format_marker_fraction("k <<<" + junk);
    markers_after_junk = format_marker_fraction(junk + "\n" + kAllMarkers);
  });
  t.join();
  EXPECT_DOUBLE_EQ(open_extern, 0.0);
  EXPECT_DOUBLE_EQ(open_launch, 0.0);
  EXPECT_DOUBLE_EQ(markers_after_junk, 1.0);
}

// What the model reads after a format-reward turn: that the code was not run, and what is missing;
// never "correct, speedup 0.00x (0.0 us vs 0.0 us)".
TEST(FormatReward, TheFeedbackSaysWhatWasMeasured) {
  const auto file = std::filesystem::temp_directory_path() / ("kernelrl-format-reward-" + std::to_string(::getpid()) + ".cu");
  std::ofstream(file) << "#include <kernelrl/abi.h>\n__global__ void k(float* x) { x[0] = 1; }\n";
  FormatRewardEvaluator evaluator;
  auto r = evaluator.evaluate({"task.py", file, common::Format::NATIVE, std::nullopt});
  std::filesystem::remove(file);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_DOUBLE_EQ(r->speedup, 0.5);
  const std::string feedback = rollout::feedback_line(std::nullopt, *r);
  EXPECT_EQ(feedback.find("0.00x"), std::string::npos) << feedback;
  EXPECT_EQ(feedback.find("us vs"), std::string::npos) << feedback;
  EXPECT_NE(feedback.find("not compiled or run"), std::string::npos) << feedback;
  EXPECT_NE(feedback.find("2 of 4 markers"), std::string::npos) << feedback;
  EXPECT_NE(feedback.find("missing: the extern \"C\" kernelrl_forward entry point, a <<<...>>> launch"), std::string::npos)
      << feedback;
}

TEST(FormatReward, InvalidUtf8IsScoredNotRejected) {
  EXPECT_DOUBLE_EQ(format_marker_fraction("\xff\xfe __global__ void k() {}"), 0.25);
}

}  // namespace
}  // namespace kernelrl::train
