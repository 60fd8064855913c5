// Which jobs of a batch an earlier, stopped run already evaluated (eval/batch_resume.hpp).
#include "eval/batch_resume.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/fs.hpp"

namespace kernelrl::eval {
namespace {

class BatchResume : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = common::make_temp_dir(std::filesystem::temp_directory_path(), "kernelrl-resume-");
    ASSERT_TRUE(d);
    dir_ = *d;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path write(const std::string& text) {
    const auto path = dir_ / "records.jsonl";
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  static EvalJob job(const std::string& task, const std::string& candidate) {
    return EvalJob{task, candidate, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  }
  std::filesystem::path dir_;
};

TEST_F(BatchResume, AMissingFileMeansNothingIsDone) {
  auto p = find_resume_point(dir_ / "none.jsonl", {job("t.py", "a.cu")});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->done, std::vector<bool>{false});
}

TEST_F(BatchResume, EachRecordCoversOneJobAndRepeatedJobsNeedOneEach) {
  const auto path = write(
      R"({"task": "t.py", "candidate": "a.cu", "format": "native", "device": "cuda", "rules": "strict", "status": "OK"})" "\n"
      R"({"task": "t.py", "candidate": "b.py", "format": "kernelbench", "device": "cuda", "rules": "kernelbench"})" "\n"
      R"({"task": "t.py", "candidate": "c.cu", "could_not_evaluate": "the task failed"})" "\n"
      R"({"task": "t.py", "candidate": "d.c)");  // cut off mid-line by a stopped run
  EvalJob strict_b = job("t.py", "b.py");
  strict_b.rules = common::RuleSet::STRICT;
  EvalJob kb_b = job("t.py", "b.py");
  kb_b.rules = common::RuleSet::KERNELBENCH;
  auto p = find_resume_point(path, {job("t.py", "a.cu"), job("t.py", "a.cu"), strict_b, kb_b, job("t.py", "c.cu"),
                                    job("t.py", "d.cu"), job("u.py", "a.cu")});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->done, (std::vector<bool>{true, false, false, true, false, false, false}));
  EXPECT_EQ(p->n_records, 2u);
  EXPECT_EQ(p->n_not_evaluated, 1u);
  EXPECT_EQ(p->n_unreadable, 1u);
  EXPECT_TRUE(p->ends_mid_line);
}

TEST_F(BatchResume, AFileEndingWithANewlineIsNotCutOff) {
  auto p = find_resume_point(write(R"({"task": "t.py", "candidate": "a.cu"})" "\n"), {job("t.py", "a.cu")});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->done, std::vector<bool>{true});
  EXPECT_FALSE(p->ends_mid_line);
}

}  // namespace
}  // namespace kernelrl::eval
