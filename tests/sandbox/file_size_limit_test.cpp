// The file-size limit of an evaluating child (RLIMIT_FSIZE, sandbox/confinement.hpp): until it
// confines itself the child may lift it to size the memory file it shares with a candidate's process
// past 64 MB (a CPU call's tensors); once confined for good (as before candidate code) it cannot, and
// asking says so instead of killing the process.
#include "sandbox/confinement.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sandbox/child_process.hpp"
#include "sandbox/shared_pages.hpp"

namespace kernelrl::sandbox {
namespace {

TEST(FileSizeLimit, AMemoryFilePastItIsSizedOnlyWithTheLimitLiftedAndNotOnceConfined) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  auto o = run_child_process(
      [](int fd) {
        ::signal(SIGXFSZ, SIG_IGN);  // past the limit ftruncate fails (EFBIG) instead of killing the process
        nlohmann::json r;
        auto pages = SharedPages::create_in_memory_file(4096);
        r["created"] = static_cast<bool>(pages);
        if (pages) {
          const std::uint64_t big = 3 * kMaxFileBytes, bigger = 4 * kMaxFileBytes;
          r["plain_grow"] = static_cast<bool>(pages->grow(big));
          auto lifted = with_file_size_limit_lifted(big, [&] { return pages->grow(big); });
          r["lifted_grow"] = static_cast<bool>(lifted);
          r["size"] = pages->size();
          rlimit after{};
          ::getrlimit(RLIMIT_FSIZE, &after);
          r["soft_after"] = static_cast<std::uint64_t>(after.rlim_cur);
          r["confined"] = static_cast<bool>(limit_file_size(true));
          bool called = false;
          auto refused = with_file_size_limit_lifted(bigger, [&] {
            called = true;
            return pages->grow(bigger);
          });
          r["confined_grow"] = static_cast<bool>(refused);
          r["confined_called"] = called;
          r["confined_error"] = refused ? "" : refused.error().message;
        }
        const std::string line = nlohmann::json{{"result", r}}.dump() + "\n";
        ssize_t n = ::write(fd, line.data(), line.size());
        (void)n;
      },
      dir.string(), {}, 10);
  ASSERT_TRUE(o.has_record) << describe_end(o);
  const auto& r = o.record["result"];
  ASSERT_TRUE(r["created"].get<bool>());
  EXPECT_FALSE(r["plain_grow"].get<bool>()) << "the child's soft limit (64 MB) stops a file sized past it";
  EXPECT_TRUE(r["lifted_grow"].get<bool>());
  EXPECT_EQ(r["size"].get<std::uint64_t>(), 3 * kMaxFileBytes);
  EXPECT_EQ(r["soft_after"].get<std::uint64_t>(), kMaxFileBytes) << "the limit is put back after the sizing";
  ASSERT_TRUE(r["confined"].get<bool>());
  EXPECT_FALSE(r["confined_grow"].get<bool>());
  EXPECT_FALSE(r["confined_called"].get<bool>());
  EXPECT_NE(r["confined_error"].get<std::string>().find("file-size limit"), std::string::npos) << r["confined_error"];
}

}  // namespace
}  // namespace kernelrl::sandbox
