// Task selection: task files of a folder, an evenly spaced sample, the manifest's split filters
// tasks, ids must be unique.
#include "task/selection.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace kernelrl::task {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = KERNELRL_SOURCE_DIR;
const fs::path kTask = kSource / "tests/ladder/task_softmax_small.py";

fs::path scratch_dir(const std::string& name) {
  auto p = fs::temp_directory_path() / ("kernelrl-selection-test-" + std::to_string(::getpid())) / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

TEST(TaskSelection, FindsPythonTaskFilesSortedAndSkipsUnderscoreFiles) {
  const fs::path dir = scratch_dir("find");
  fs::create_directories(dir / "sub");
  for (const char* name : {"b.py", "a.py", "_helper.py", "notes.txt", "sub/c.py"}) std::ofstream(dir / name) << "\n";
  auto files = find_task_files(dir);
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(*files, (std::vector<fs::path>{dir / "a.py", dir / "b.py", dir / "sub/c.py"}));
  auto missing = find_task_files(dir / "nope");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("no such folder"), std::string::npos);
}

TEST(TaskSelection, EvenlySpacedKeepsFirstAndLast) {
  const std::vector<fs::path> files{"0", "1", "2", "3", "4", "5", "6"};
  EXPECT_EQ(evenly_spaced(files, 3), (std::vector<fs::path>{"0", "3", "6"}));
  EXPECT_EQ(evenly_spaced(files, 1), (std::vector<fs::path>{"0"}));
  EXPECT_EQ(evenly_spaced(files, 0), files);
  EXPECT_EQ(evenly_spaced(files, 9), files);
}

TEST(TaskSelection, SplitComesFromTheManifest) {
  auto all = select_tasks({kSource / "tasks/level1"}, "all");
  auto test = select_tasks({kSource / "tasks/level1"}, "test");
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_TRUE(test) << test.error().message;
  EXPECT_GT(test->size(), 0u);
  EXPECT_LT(test->size(), all->size());
  for (const auto& t : *test) {
    EXPECT_EQ(t.split, "test") << t.path;
    EXPECT_EQ(t.level, 1) << t.path;
    EXPECT_NE(t.source.find("class Model"), std::string::npos) << t.path;
    EXPECT_EQ(t.path, t.given);  // at full size the task is its own file
  }
}

TEST(TaskSelection, ATaskWithoutManifestHasNoSplitAndOnlyAllKeepsIt) {
  auto all = select_tasks({kTask}, "all");
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].id, "task_softmax_small");
  EXPECT_FALSE((*all)[0].split);
  auto train = select_tasks({kTask}, "train");
  ASSERT_FALSE(train);
  EXPECT_NE(train.error().message.find("no tasks"), std::string::npos);
}

TEST(TaskSelection, TwoTasksWithOneIdAreRefused) {
  auto dir = scratch_dir("two-ids");
  std::filesystem::create_directories(dir / "a");
  std::filesystem::create_directories(dir / "b");
  std::filesystem::copy_file(kTask, dir / "a" / "softmax.py");
  std::filesystem::copy_file(kTask, dir / "b" / "softmax.py");
  auto r = select_tasks({dir}, "all");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("'softmax'"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace kernelrl::task
