// The programs a candidate runs in (tools/runner), exec'd the way the evaluating child starts them
// (eval/runner_process.cpp: the protocol's pages as descriptor 3, nothing else), on any machine:
// linked non-PIE with full RELRO and BIND_NOW; a host runner confines itself and reports it, serves
// idle calls before any candidate is loaded, fails a call before a load and a load of a missing
// library with a message, sleeps between requests instead of spinning (the child refuses CPU time
// spent there), exits on EXIT and when its parent is gone; a native runner without a usable GPU
// says why after START; bad arguments and a bad START are refused.
#include <gtest/gtest.h>

#include <elf.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../common/process_state.hpp"
#include "compile/elf_file.hpp"
#include "kernelrl/build_config.hpp"
#include "runner/protocol.hpp"

namespace kernelrl::runner {
namespace {

using namespace std::chrono_literals;

int exit_code(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Starts `program` as the child does: `pages_fd` as descriptor 3, stderr silenced unless asked.
pid_t spawn(const std::string& program, std::vector<std::string> args, int pages_fd, bool quiet = true) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (quiet) posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  if (pages_fd >= 0) posix_spawn_file_actions_adddup2(&actions, pages_fd, 3);
  args.insert(args.begin(), program);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

std::vector<std::string> args_for(const std::string& kind, const std::string& device) {
  return {"--kind", kind, "--device", device, "--pages-fd", "3", "--parent", std::to_string(::getpid())};
}

// A runner of `kind` started over fresh pages in a scratch folder of its own (its working folder,
// which it may read: the child puts the candidate's files there).
class RunnerProgram : public ::testing::Test {
 protected:
  void start(const std::string& kind, const std::string& device) {
    auto pages = sandbox::SharedPages::create_in_memory_file(kDataOffset + (1 << 20));
    ASSERT_TRUE(pages) << pages.error().message;
    pages_.emplace(std::move(*pages));
    h_ = new (pages_->data()) Header{};
    const int fd = ::fcntl(pages_->fd(), F_DUPFD, 10);  // without close-on-exec, as dup2 makes it
    pid_ = spawn(build::runner_program, args_for(kind, device), fd);
    ::close(fd);
    ASSERT_GT(pid_, 0);
  }

  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  bool answered(std::uint32_t seq, std::chrono::seconds within = 60s) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    return h_->reply.wait_for(seq, 0us, 20ms, [&] { return std::chrono::steady_clock::now() < deadline; });
  }

  bool request(Op op, const std::string& text = "") {
    if (!text.empty()) write_text(h_, text);
    h_->op = op;
    h_->command.ring(++seq_);
    return answered(seq_);
  }

  std::int64_t runner_cpu_ns() const {
    clockid_t clock{};
    timespec t{};
    if (::clock_getcpuclockid(pid_, &clock) != 0 || ::clock_gettime(clock, &t) != 0) return -1;
    return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
  }

  std::optional<sandbox::SharedPages> pages_;
  Header* h_ = nullptr;
  pid_t pid_ = -1;
  std::uint32_t seq_ = 0;
};

TEST(RunnerBinary, IsLinkedNonPieWithFullRelroAndBindNow) {
  for (const char* program : {build::runner_program, build::kernelbench_runner_program}) {
    auto elf = compile::read_elf(program);
    ASSERT_TRUE(elf) << elf.error().message;
    const std::string_view bytes = elf->bytes;
    ASSERT_GE(bytes.size(), sizeof(Elf64_Ehdr));
    Elf64_Ehdr eh{};
    std::memcpy(&eh, bytes.data(), sizeof eh);
    EXPECT_EQ(eh.e_type, ET_EXEC) << program << ": position-independent (its image could sit anywhere)";
    bool relro = false;
    std::uint64_t dyn_offset = 0, dyn_size = 0;
    for (int i = 0; i < eh.e_phnum; ++i) {
      Elf64_Phdr ph{};
      std::memcpy(&ph, bytes.data() + eh.e_phoff + static_cast<std::size_t>(i) * eh.e_phentsize, sizeof ph);
      if (ph.p_type == PT_GNU_RELRO) relro = true;
      if (ph.p_type == PT_DYNAMIC) {
        dyn_offset = ph.p_offset;
        dyn_size = ph.p_filesz;
      }
    }
    EXPECT_TRUE(relro) << program << ": no PT_GNU_RELRO";
    bool bind_now = false;
    for (std::uint64_t off = dyn_offset; off + sizeof(Elf64_Dyn) <= dyn_offset + dyn_size; off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d{};
      std::memcpy(&d, bytes.data() + off, sizeof d);
      if ((d.d_tag == DT_FLAGS && (d.d_un.d_val & DF_BIND_NOW)) || (d.d_tag == DT_FLAGS_1 && (d.d_un.d_val & DF_1_NOW)) ||
          d.d_tag == DT_BIND_NOW) {
        bind_now = true;
      }
    }
    EXPECT_TRUE(bind_now) << program << ": relocations bound lazily (a writable GOT)";
  }
}

TEST(RunnerBinary, BadArgumentsAreRefused) {
  const pid_t pid = spawn(build::runner_program, {"--kind", "python", "--device", "cpu", "--pages-fd", "3", "--parent", "2"}, -1);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(exit_code(pid), 64);
}

TEST_F(RunnerProgram, AHostRunnerConfinesItselfServesIdleCallsAndFailsWithoutACandidate) {
  start("host", "cpu");
  // Nothing is said before START: the runner only gets ready.
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(h_->reply.value.load(), 0u);
  ASSERT_TRUE(::ftruncate(pages_->fd(), static_cast<off_t>(pages_->size())) == 0);
  ASSERT_TRUE(request(Op::START, nlohmann::json{{"artifact", "/nonexistent/libcandidate.so"},
                                                {"pages_bytes", pages_->size()}}.dump()));
  ASSERT_EQ(h_->rc, 0) << read_text(h_);
  const nlohmann::json report = nlohmann::json::parse(read_text(h_), nullptr, false);
  ASSERT_TRUE(report.is_object()) << read_text(h_);
  EXPECT_EQ(report.value("file_confinement", false), true) << report.dump();
  EXPECT_EQ(report.value("syscall_filter", false), true) << report.dump();
  EXPECT_EQ(report.value("file_size_limit", false), true) << report.dump();
  // Idle calls before any load: answered, nothing run.
  h_->rc = 42;
  ASSERT_TRUE(request(Op::IDLE));
  EXPECT_EQ(h_->rc, 0);
  // A call before any load has no candidate to call.
  ASSERT_TRUE(request(Op::CALL));
  EXPECT_EQ(h_->rc, 1);
  // A library it cannot read (missing, or outside what it may read) is a load failure with a message.
  ASSERT_TRUE(request(Op::LOAD));
  EXPECT_EQ(h_->rc, kCannotLoad);
  EXPECT_NE(read_text(h_).find("cannot load the compiled candidate"), std::string::npos) << read_text(h_);
  h_->op = Op::EXIT;
  h_->command.ring(++seq_);
  EXPECT_EQ(exit_code(pid_), 0);
  pid_ = -1;
}

// Between requests the runner sleeps: the child refuses CPU time spent there (eval/runner_candidate.cpp),
// so an honest runner must spend next to none.
TEST_F(RunnerProgram, ARunnerSpendsNoCpuTimeBetweenRequests) {
  start("host", "cpu");
  ASSERT_TRUE(::ftruncate(pages_->fd(), static_cast<off_t>(pages_->size())) == 0);
  ASSERT_TRUE(request(Op::START, nlohmann::json{{"artifact", "/nonexistent/lib.so"}, {"pages_bytes", pages_->size()}}.dump()));
  ASSERT_EQ(h_->rc, 0) << read_text(h_);
  std::int64_t worst_ns = 0;
  for (int i = 0; i < 20; ++i) {
    const std::int64_t after_reply = runner_cpu_ns();
    std::this_thread::sleep_for(10ms);
    const std::int64_t before_request = runner_cpu_ns();
    ASSERT_GE(after_reply, 0);
    worst_ns = std::max(worst_ns, before_request - after_reply);
    ASSERT_TRUE(request(Op::IDLE));
  }
  EXPECT_LT(worst_ns, 200'000) << "the runner used " << worst_ns / 1000 << " us of CPU time while waiting 10 ms";
}

TEST_F(RunnerProgram, ABadStartIsRefusedAndEndsIt) {
  start("host", "cpu");
  ASSERT_TRUE(request(Op::START, "{}"));
  EXPECT_EQ(h_->rc, -1);
  EXPECT_NE(read_text(h_).find("START"), std::string::npos) << read_text(h_);
  EXPECT_EQ(exit_code(pid_), 1);
  pid_ = -1;
}

TEST_F(RunnerProgram, AnotherFirstRequestEndsIt) {
  start("host", "cpu");
  h_->op = Op::LOAD;  // a candidate's load before the runner was handed its evaluation
  h_->command.ring(1);
  EXPECT_EQ(exit_code(pid_), 1);
  pid_ = -1;
  EXPECT_EQ(h_->reply.value.load(), 0u);
}

// A native runner on a machine whose CUDA cannot serve the child's arena (no GPU here, or a handle
// of no allocation) says why after START and ends, instead of hanging or loading the candidate.
TEST_F(RunnerProgram, ANativeRunnerThatCannotSetUpItsDeviceSaysWhy) {
  start("native", "cuda");
  h_->device = 0;
  h_->arena_bytes = 1 << 20;  // the IPC handles stay zeros: no allocation of any process
  ASSERT_TRUE(request(Op::START, R"({"artifact": "/nonexistent.so"})"));
  EXPECT_EQ(h_->rc, -1);
  const std::string text = read_text(h_);
  EXPECT_TRUE(text.find("CUDA context") != std::string::npos || text.find("cudaSetDevice") != std::string::npos ||
              text.find("cudaIpcOpen") != std::string::npos)
      << text;
  EXPECT_EQ(exit_code(pid_), 1);
  pid_ = -1;
}

// The runner dies with the process that started it (PR_SET_PDEATHSIG), checked against --parent.
TEST(RunnerBinary, ARunnerWhoseParentIsGoneEnds) {
  auto pages = sandbox::SharedPages::create_in_memory_file(kDataOffset);
  ASSERT_TRUE(pages) << pages.error().message;
  new (pages->data()) Header{};
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t middle = ::fork();
  if (middle == 0) {
    const int fd = ::fcntl(pages->fd(), F_DUPFD, 10);
    const pid_t runner = spawn(build::runner_program, args_for("host", "cpu"), fd);
    (void)!::write(pipe_fds[1], &runner, sizeof runner);
    std::this_thread::sleep_for(200ms);
    _exit(0);
  }
  pid_t runner = -1;
  ASSERT_EQ(::read(pipe_fds[0], &runner, sizeof runner), static_cast<ssize_t>(sizeof runner));
  ::waitpid(middle, nullptr, 0);
  ASSERT_GT(runner, 0);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  bool gone = false;
  while (!gone && std::chrono::steady_clock::now() < deadline) {
    const auto state = kernelrl::testing::read_process_state(runner);
    gone = !state || state->state == 'Z';  // a zombie not yet reaped counts as gone
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(gone) << "the runner outlived the process that started it";
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

}  // namespace
}  // namespace kernelrl::runner
