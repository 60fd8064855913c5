// The orchestrator's worker handle: replies are matched to requests, and a worker that dies is
// reported (naming it) and restarted instead of hanging or crashing the orchestrator.
#include "sandbox/worker_client.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace kernelrl::sandbox {
namespace {

// A stand-in worker written in shell: reads requests on --in, answers with `reply` on --out.
std::string fake_worker(const std::string& name, const std::string& reply_script) {
  auto path = std::filesystem::temp_directory_path() / ("kernelrl-fake-worker-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(path) << "#!/bin/sh\n"
                         "# args: worker --in FD --out FD\n"
                         "in=$3; out=$5\n"
                      << reply_script;
  ::chmod(path.c_str(), 0755);
  return path.string();
}

TEST(WorkerClient, RepliesAreMatchedToTheirRequest) {
  // Echoes each request's id back with a field, after a stale reply with another id.
  auto bin = fake_worker("echo",
                         "while read -r line <&$in; do\n"
                         "  id=$(echo \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')\n"
                         "  echo '{\"id\":999,\"stale\":true}' >&$out\n"
                         "  echo \"{\\\"id\\\":$id,\\\"ok\\\":true}\" >&$out\n"
                         "done\n");
  auto w = WorkerClient::spawn(bin);
  ASSERT_TRUE(w) << w.error().message;
  for (int i = 0; i < 3; ++i) {
    auto r = (*w)->request({{"op", "ping"}});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ((*r)["ok"], true);
    EXPECT_FALSE(r->contains("stale"));
  }
  w->reset();
  std::filesystem::remove(bin);
}

TEST(WorkerClient, ADeadWorkerIsReportedAndRestarted) {
  auto bin = fake_worker("dies", "read -r line <&$in; exit 3\n");
  auto w = WorkerClient::spawn(bin);
  ASSERT_TRUE(w) << w.error().message;
  for (int i = 0; i < 2; ++i) {  // the second request goes to the restarted worker
    auto r = (*w)->request({{"op", "ping"}});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("died"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("restarted"), std::string::npos) << r.error().message;
  }
  w->reset();
  std::filesystem::remove(bin);
}

}  // namespace
}  // namespace kernelrl::sandbox
