// Task sizes (task/sizes.hpp): constants rewritten in the source, the manifest's "sizes" checked
// with errors naming the file, entry, field and value, sized copies written once with their own
// manifest, and every shipped task resizable to its "small" size.
#include "task/sizes.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "common/fs.hpp"
#include "task/manifest.hpp"

namespace kernelrl::task {
namespace {

namespace fs = std::filesystem;

const std::string kTask =
    "# A task.\n"
    "import torch\n"
    "N = 4096  # rows\n"
    "N_COLS = 8_192\n"
    "K = 3\n"
    "def get_inputs():\n"
    "    N = 1  # not module level\n"
    "    return [torch.randn(N, N_COLS)]\n";

TEST(ResizeSource, SetsModuleLevelConstantsAndSaysWhichSize) {
  auto r = resize_source(kTask, {{"N", 64}, {"N_COLS", 128}}, "t.py", "small");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r,
            "# kernelrl: size 'small' of t.py: N = 64 (full: 4096), N_COLS = 128 (full: 8_192)\n"
            "# A task.\n"
            "import torch\n"
            "N = 64  # rows\n"
            "N_COLS = 128\n"
            "K = 3\n"
            "def get_inputs():\n"
            "    N = 1  # not module level\n"
            "    return [torch.randn(N, N_COLS)]\n");
}

TEST(ResizeSource, ConstantsItCannotSetAreErrorsNamingFileAndConstant) {
  auto missing = resize_source(kTask, {{"M", 8}}, "t.py", "small");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("t.py: size 'small' sets M, but the file has no module-level `M = ...` line"),
            std::string::npos)
      << missing.error().message;
  auto twice = resize_source(kTask + "K = 4\n", {{"K", 1}}, "t.py", "small");
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message.find("has 2 module-level `K = ...` lines"), std::string::npos) << twice.error().message;
  auto computed = resize_source("N = 2 * 64\n", {{"N", 8}}, "t.py", "small");
  ASSERT_FALSE(computed);
  EXPECT_NE(computed.error().message.find("t.py:1: size 'small' sets N, but `N = 2 * 64` does not assign it an integer"),
            std::string::npos)
      << computed.error().message;
}

class TaskSizesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kernelrl-sizes-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "tasks");
    std::ofstream(dir_ / "tasks" / "001_a.py") << kTask;
    std::ofstream(dir_ / "tasks" / "002_b.py") << kTask;
    std::ofstream(dir_ / "unlisted.py") << kTask;
    write_manifest(R"({"file": "001_a.py", "split": "test", "families": ["x"], "flops": 10, "min_bytes": 20,
                       "sizes": {"small": {"N": 64}, "same": {}}},
                      {"file": "002_b.py", "split": "train", "flops": 1, "min_bytes": 1})");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write_manifest(const std::string& tasks) {
    std::ofstream(dir_ / "tasks" / "manifest.json") << R"({"level": 1, "tasks": [)" + tasks + "]}";
  }
  fs::path dir_;
};

TEST_F(TaskSizesTest, ASizedCopyIsWrittenOnceWithAManifestOfItsOwn) {
  const fs::path cache = dir_ / "cache";
  auto full = task_at_size(dir_ / "tasks" / "001_a.py", "full", cache);
  ASSERT_TRUE(full) << full.error().message;
  EXPECT_EQ(full->path, dir_ / "tasks" / "001_a.py");
  EXPECT_FALSE(full->resized);

  auto small = task_at_size(dir_ / "tasks" / "001_a.py", "small", cache);
  ASSERT_TRUE(small) << small.error().message;
  EXPECT_TRUE(small->resized);
  EXPECT_EQ(small->path.filename(), "001_a.py");
  EXPECT_EQ(small->path.parent_path().parent_path(), cache / "tasks" / "small");
  auto text = common::read_file(small->path, 1 << 20);
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("\nN = 64  # rows\n"), std::string::npos) << *text;
  // Its manifest keeps level and split (rollouts select by them) and drops FLOPs and bytes.
  auto entry = manifest_entry_for(small->path);
  ASSERT_TRUE(entry && *entry) << (entry ? "no entry" : entry.error().message);
  EXPECT_EQ((*entry)->level, 1);
  EXPECT_EQ((*entry)->split, "test");
  EXPECT_EQ((*entry)->families, std::vector<std::string>{"x"});
  EXPECT_EQ((*entry)->flops, 0);
  EXPECT_EQ((*entry)->min_bytes, 0);
  // The same size again is the same file.
  auto again = task_at_size(dir_ / "tasks" / "001_a.py", "small", cache);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->path, small->path);

  auto same = task_at_size(dir_ / "tasks" / "001_a.py", "same", cache);  // a size that changes nothing
  ASSERT_TRUE(same);
  EXPECT_EQ(same->path, dir_ / "tasks" / "001_a.py");
  auto unlisted = task_at_size(dir_ / "unlisted.py", "small", cache);  // no manifest: its own size
  ASSERT_TRUE(unlisted);
  EXPECT_EQ(unlisted->path, dir_ / "unlisted.py");
  EXPECT_FALSE(unlisted->in_manifest);
}

TEST_F(TaskSizesTest, AListedTaskWithoutTheSizeIsAnErrorNamingManifestAndSizes) {
  auto r = task_at_size(dir_ / "tasks" / "002_b.py", "small", dir_ / "cache");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("manifest.json: 002_b.py has no size 'small' (its sizes: full)"), std::string::npos)
      << r.error().message;
  auto tiny = task_at_size(dir_ / "tasks" / "001_a.py", "tiny", dir_ / "cache");
  ASSERT_FALSE(tiny);
  EXPECT_NE(tiny.error().message.find("(its sizes: full, same, small)"), std::string::npos) << tiny.error().message;
}

TEST_F(TaskSizesTest, BadSizesInTheManifestNameEntryFieldAndValue) {
  const fs::path task = dir_ / "tasks" / "001_a.py";
  write_manifest(R"({"file": "001_a.py", "split": "train", "flops": 1, "min_bytes": 1, "sizes": {"small": {"N": -2}}})");
  auto negative = manifest_entry_for(task);
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.error().message.find("tasks[0] (001_a.py): 'sizes.small.N' must be a positive integer, got -2"),
            std::string::npos)
      << negative.error().message;
  write_manifest(R"({"file": "001_a.py", "split": "train", "flops": 1, "min_bytes": 1, "sizes": {"small": 4}})");
  auto not_object = manifest_entry_for(task);
  ASSERT_FALSE(not_object);
  EXPECT_NE(not_object.error().message.find("'sizes.small' must be an object of constants"), std::string::npos)
      << not_object.error().message;
  write_manifest(R"({"file": "001_a.py", "split": "train", "flops": 1, "min_bytes": 1, "sizes": {"full": {}}})");
  auto full = manifest_entry_for(task);
  ASSERT_FALSE(full);
  EXPECT_NE(full.error().message.find("'sizes.full'"), std::string::npos) << full.error().message;
}

// Every shipped task has a "small" size its file accepts (the CPU size; `kernelrl tasks check
// --size small` runs them).
TEST(ShippedTasks, EveryTaskHasASmallSizeItsFileAccepts) {
  int n_resized = 0;
  for (const char* level : {"tasks/level1", "tasks/level2"}) {
    const fs::path dir = fs::path(KERNELRL_SOURCE_DIR) / level;
    auto entries = read_manifest(dir / "manifest.json");
    ASSERT_TRUE(entries) << entries.error().message;
    ASSERT_EQ(entries->size(), 100u);
    for (const auto& e : *entries) {
      ASSERT_TRUE(e.sizes.count("small")) << level << "/" << e.file << " has no size 'small'";
      auto it = e.sizes.find("small");
      auto source = common::read_file(dir / e.file, 1 << 20);
      ASSERT_TRUE(source) << source.error().message;
      auto resized = resize_source(*source, it->second, e.file, "small");
      EXPECT_TRUE(resized) << resized.error().message;
      n_resized += !it->second.empty();
    }
  }
  EXPECT_GE(n_resized, 190);  // nearly every task is too large for a CPU as shipped
}

}  // namespace
}  // namespace kernelrl::task
