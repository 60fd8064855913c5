// common::write_file_atomic from many threads of one process at once: every write succeeds and the
// file always holds one writer's whole text (on the H200 a service worker's prefetched job and the
// job it evaluated wrote the same task file and shared a temporary: "cannot rename into place").
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/fs.hpp"

namespace kernelrl::common {
namespace {

namespace fs = std::filesystem;

TEST(WriteFileAtomic, ThreadsWritingOneFileAllSucceedWithWholeTexts) {
  const fs::path dir = fs::temp_directory_path() / ("kernelrl-atomic-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const fs::path file = dir / "manifest.json";
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const std::string text(4096 + t, static_cast<char>('a' + t));
      for (int k = 0; k < 50; ++k) {
        if (auto s = write_file_atomic(file, text); !s) {
          ++failures;
          ADD_FAILURE() << s.error().message;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  auto text = read_file(file, 1 << 20);
  ASSERT_TRUE(text) << text.error().message;
  ASSERT_GE(text->size(), 4096u);
  EXPECT_EQ(text->size(), 4096u + static_cast<std::size_t>((*text)[0] - 'a')) << "a mixed or cut file";
  EXPECT_EQ(text->find_first_not_of((*text)[0]), std::string::npos) << "a mixed file";
  std::size_t n_files = 0;
  for ([[maybe_unused]] const auto& f : fs::directory_iterator(dir)) ++n_files;
  EXPECT_EQ(n_files, 1u) << "temporaries left behind";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelrl::common
