// Task manifests and the speed of light derived from them: parsing with errors that name the file
// and entry, lookup beside a task file, the shipped manifests cover every task, and the bound
// against hand-computed numbers.
#include "eval/speed_of_light.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "task/manifest.hpp"

namespace kernelrl::eval {
namespace {

namespace fs = std::filesystem;

class ManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kernelrl-manifest-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& text) { std::ofstream(dir_ / "manifest.json") << text; }
  fs::path dir_;
};

TEST_F(ManifestTest, EntryIsFoundBesideItsTask) {
  write(R"({"level": 2, "tasks": [{"file": "001_a.py", "split": "test", "families": ["matmul"],
           "flops": 2e9, "min_bytes": 4e6, "dtype": "float32", "note": "A @ B"}]})");
  auto e = task::manifest_entry_for(dir_ / "001_a.py");
  ASSERT_TRUE(e) << e.error().message;
  ASSERT_TRUE(e->has_value());
  EXPECT_EQ((*e)->level, 2);
  EXPECT_EQ((*e)->split, "test");
  EXPECT_EQ((*e)->families, std::vector<std::string>{"matmul"});
  EXPECT_DOUBLE_EQ((*e)->flops, 2e9);
  auto missing = task::manifest_entry_for(dir_ / "002_b.py");
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());
}

TEST_F(ManifestTest, BadEntriesNameTheFileEntryAndField) {
  write(R"({"level": 1, "tasks": [{"file": "001_a.py", "split": "val", "flops": 1, "min_bytes": 1}]})");
  auto e = task::manifest_entry_for(dir_ / "001_a.py");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("manifest.json: tasks[0] (001_a.py): 'split' is 'val'"), std::string::npos)
      << e.error().message;
  write(R"({"level": 1, "tasks": [{"file": "001_a.py", "split": "train", "flops": "many", "min_bytes": 1}]})");
  e = task::manifest_entry_for(dir_ / "001_a.py");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("'flops' must be a non-negative number"), std::string::npos) << e.error().message;
  write("{not json");
  e = task::manifest_entry_for(dir_ / "001_a.py");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("not valid JSON"), std::string::npos) << e.error().message;
}

TEST(ShippedManifests, ListEveryTaskOnceWithTenTestTasksPerLevel) {
  for (const char* level : {"level1", "level2"}) {
    const fs::path dir = fs::path(KERNELRL_SOURCE_DIR) / "tasks" / level;
    auto entries = task::read_manifest(dir / "manifest.json");
    ASSERT_TRUE(entries) << entries.error().message;
    std::set<std::string> listed;
    int n_test = 0;
    for (const auto& e : *entries) {
      EXPECT_TRUE(listed.insert(e.file).second) << e.file << " listed twice";
      EXPECT_TRUE(fs::is_regular_file(dir / e.file)) << e.file << " listed but missing";
      EXPECT_GT(e.flops, 0) << e.file;
      EXPECT_GT(e.min_bytes, 0) << e.file;
      n_test += e.split == "test";
    }
    std::size_t n_files = 0;
    for (const auto& f : fs::directory_iterator(dir)) {
      if (f.path().extension() != ".py") continue;
      ++n_files;
      EXPECT_TRUE(listed.count(f.path().filename().string())) << f.path() << " not in the manifest";
    }
    EXPECT_EQ(n_files, 100u) << level;
    EXPECT_EQ(n_test, 10) << level;
  }
}

TEST(SpeedOfLight, IsTheSlowerOfComputeAndMemoryOnTheDevicesPeaks) {
  auto h200 = peaks_for_device("NVIDIA H200");
  ASSERT_TRUE(h200);
  task::ManifestEntry matmul;
  matmul.flops = 2.0 * 4096 * 4096 * 4096;  // 137.4 GFLOP
  matmul.min_bytes = 3.0 * 4096 * 4096 * 4;
  auto s = speed_of_light(matmul, *h200);
  EXPECT_EQ(s.bound, "compute");
  EXPECT_NEAR(s.us, 137438953472.0 / 67e12 * 1e6, 1e-6);  // 2051.3 us
  task::ManifestEntry relu;
  relu.flops = 134217728;
  relu.min_bytes = 1073741824;
  s = speed_of_light(relu, *h200);
  EXPECT_EQ(s.bound, "memory");
  EXPECT_NEAR(s.us, 1073741824.0 / 4.8e12 * 1e6, 1e-6);  // 223.7 us
  EXPECT_EQ(peaks_for_device("NVIDIA H100 PCIe")->model, "H100 PCIe");
  EXPECT_FALSE(peaks_for_device("Some Unknown GPU"));
}

TEST(SpeedOfLight, PlausibleFloorUsesTheTensorCorePeakAndAMargin) {
  auto h200 = peaks_for_device("NVIDIA H200");
  ASSERT_TRUE(h200);
  task::ManifestEntry matmul;
  matmul.flops = 2.0 * 4096 * 4096 * 4096;
  matmul.min_bytes = 3.0 * 4096 * 4096 * 4;
  // 137.4 GFLOP at 989 TFLOP/s = 139.0 us; 201 MB at 4.8 TB/s = 41.9 us: compute-bound floor.
  EXPECT_NEAR(plausible_floor_us(matmul, *h200, 1.0), 137438953472.0 / 989e12 * 1e6, 1e-6);
  EXPECT_NEAR(plausible_floor_us(matmul, *h200), 0.8 * 137438953472.0 / 989e12 * 1e6, 1e-6);
  // The floor sits below the FP32 speed of light: tensor-core kernels within tolerance are fine.
  EXPECT_LT(plausible_floor_us(matmul, *h200), speed_of_light(matmul, *h200).us);
  task::ManifestEntry relu;
  relu.flops = 134217728;
  relu.min_bytes = 1073741824;
  EXPECT_NEAR(plausible_floor_us(relu, *h200), 0.8 * 1073741824.0 / 4.8e12 * 1e6, 1e-6);  // 179 us
}

}  // namespace
}  // namespace kernelrl::eval
