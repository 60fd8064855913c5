// tasks/starter (issue 22): single-operator tasks of one shape, split by operator into train and
// held-out, as scripts/make_starter_tasks.py writes them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "common/fs.hpp"
#include "task/manifest.hpp"
#include "task/sizes.hpp"

namespace kernelrl::task {
namespace {

namespace fs = std::filesystem;

const fs::path kStarter = fs::path(KERNELRL_SOURCE_DIR) / "tasks" / "starter";

// The operator a file is: "007_tanh.py" -> "tanh".
std::string op_of(const std::string& file) { return file.substr(4, file.size() - 4 - 3); }

TEST(StarterTasks, FortyOrMoreOperatorsOfOneShapeWithTenOrMoreHeldOut) {
  auto entries = read_manifest(kStarter / "manifest.json");
  ASSERT_TRUE(entries) << entries.error().message;
  ASSERT_GE(entries->size(), 40u);
  std::set<std::string> train_ops, test_ops;
  for (const auto& e : *entries) {
    EXPECT_EQ(e.level, 0) << e.file;
    EXPECT_TRUE(e.split == "train" || e.split == "test") << e.file << ": split " << e.split;
    (e.split == "test" ? test_ops : train_ops).insert(op_of(e.file));
    auto source = common::read_file(kStarter / e.file, 1 << 20);
    ASSERT_TRUE(source) << source.error().message;
    // One shape: every task's inputs are (rows, cols) = (8192, 16384) float32 (512 MB each, >= 0.1 ms
    // of eager memory traffic on an H200 even for a row reduction).
    EXPECT_NE(source->find("\nrows = 8192\n"), std::string::npos) << e.file;
    EXPECT_NE(source->find("\ncols = 16384\n"), std::string::npos) << e.file;
    EXPECT_GE(e.min_bytes, 8192.0 * 16384 * 4) << e.file;
    ASSERT_TRUE(e.sizes.count("small")) << e.file;
    auto small = resize_source(*source, e.sizes.at("small"), e.file, "small");
    EXPECT_TRUE(small) << small.error().message;
  }
  EXPECT_GE(test_ops.size(), 10u);
  EXPECT_EQ(train_ops.size() + test_ops.size(), entries->size()) << "an operator listed twice";
  for (const auto& op : test_ops) EXPECT_FALSE(train_ops.count(op)) << op << " is in both splits";
}

// The shipped files (tasks and fixtures) are the generator's output: edit
// scripts/make_starter_tasks.py, not the files.
TEST(StarterTasks, AreWhatTheGeneratorWrites) {
  const fs::path root = fs::temp_directory_path() / ("kernelrl-starter-" + std::to_string(::getpid()));
  const fs::path source = KERNELRL_SOURCE_DIR;
  const std::string cmd =
      "python3 '" + (source / "scripts" / "make_starter_tasks.py").string() + "' '" + root.string() + "' >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  for (const char* dir : {"tasks/starter", "tasks/fixtures/starter"}) {
    std::size_t n_shipped = 0, n_made = 0;
    for (const auto& f : fs::directory_iterator(source / dir)) {
      auto shipped = common::read_file(f.path(), 1 << 20);
      auto made = common::read_file(root / dir / f.path().filename(), 1 << 20);
      ASSERT_TRUE(shipped && made) << dir << "/" << f.path().filename().string() << " is not written by the generator";
      EXPECT_EQ(*shipped, *made) << dir << "/" << f.path().filename().string() << " differs from the generator's";
      ++n_shipped;
    }
    for ([[maybe_unused]] const auto& f : fs::directory_iterator(root / dir)) ++n_made;
    EXPECT_EQ(n_shipped, n_made) << dir << ": the generator writes files that are not shipped";
  }
  EXPECT_TRUE(fs::exists(root / "tasks/fixtures/starter/001_abs.native.cu"));
  fs::remove_all(root);
}

}  // namespace
}  // namespace kernelrl::task
