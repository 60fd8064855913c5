// Write confinement: after confine_writes, files can be written below the allowed folders only.
#include "sandbox/confinement.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "sandbox/child_process.hpp"

namespace kernelrl::sandbox {
namespace {

TEST(WriteConfinement, OnlyTheAllowedFolderIsWritable) {
  namespace fs = std::filesystem;
  const fs::path base = fs::temp_directory_path() / ("kernelrl-confine-test-" + std::to_string(::getpid()));
  const fs::path inside = base / "scratch", outside = base / "elsewhere";
  fs::create_directories(inside);
  fs::create_directories(outside);
  auto o = run_child_process(
      [&](int fd) {
        auto confined = confine_writes({inside.string()});
        std::string verdict = confined ? "confined" : "unconfined: " + confined.error().message;
        FILE* in = std::fopen((inside / "ok.txt").c_str(), "w");
        FILE* out = std::fopen((outside / "escape.txt").c_str(), "w");
        std::string line = std::string(R"({"result":{"verdict":")") + verdict + R"(","inside":)" +
                           (in ? "true" : "false") + R"(,"outside":)" + (out ? "true" : "false") + "}}\n";
        ssize_t n = ::write(fd, line.data(), line.size());
        (void)n;
      },
      inside.string(), {}, 10);
  ASSERT_TRUE(o.has_record) << describe_end(o);
  const auto& r = o.record["result"];
  if (r["verdict"] != "confined") GTEST_SKIP() << "SKIPPED: " << r["verdict"].get<std::string>();
  EXPECT_TRUE(r["inside"].get<bool>());
  EXPECT_FALSE(r["outside"].get<bool>());
  EXPECT_FALSE(fs::exists(outside / "escape.txt"));
  fs::remove_all(base);
}

}  // namespace
}  // namespace kernelrl::sandbox
