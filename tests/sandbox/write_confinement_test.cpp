// Write confinement: after confine_writes, files can be written below the allowed folders only.
// Read confinement: after confine_reads, files can be read (and programs run) below the given roots only.
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

TEST(ReadConfinement, OnlyTheAllowedRootsAreReadable) {
  namespace fs = std::filesystem;
  const fs::path base = fs::temp_directory_path() / ("kernelrl-read-confine-test-" + std::to_string(::getpid()));
  const fs::path inside = base / "allowed", outside = base / "elsewhere", single = base / "single.txt";
  fs::create_directories(inside);
  fs::create_directories(outside);
  for (const auto& p : {inside / "a.txt", outside / "b.txt", single}) std::fclose(std::fopen(p.c_str(), "w"));
  auto o = run_child_process(
      [&](int fd) {
        // A missing root is skipped; a single file is a root of its own.
        auto confined = confine_reads({inside.string(), single.string(), (base / "missing").string()});
        std::string verdict = confined ? "confined" : "unconfined: " + confined.error().message;
        auto readable = [](const fs::path& p) {
          FILE* f = std::fopen(p.c_str(), "r");
          if (f) std::fclose(f);
          return f ? "true" : "false";
        };
        std::string line = std::string(R"({"result":{"verdict":")") + verdict + R"(","inside":)" + readable(inside / "a.txt") +
                           R"(,"single":)" + readable(single) + R"(,"outside":)" + readable(outside / "b.txt") + "}}\n";
        ssize_t n = ::write(fd, line.data(), line.size());
        (void)n;
      },
      inside.string(), {}, 10);
  ASSERT_TRUE(o.has_record) << describe_end(o);
  const auto& r = o.record["result"];
  if (r["verdict"] != "confined") GTEST_SKIP() << "SKIPPED: " << r["verdict"].get<std::string>();
  EXPECT_TRUE(r["inside"].get<bool>());
  EXPECT_TRUE(r["single"].get<bool>());
  EXPECT_FALSE(r["outside"].get<bool>());
  fs::remove_all(base);
}

}  // namespace
}  // namespace kernelrl::sandbox
