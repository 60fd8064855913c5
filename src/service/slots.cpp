#include "service/slots.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

namespace kernelrl::service {

namespace {

using clock_type = std::chrono::steady_clock;

struct Child {
  std::string gpu;
  pid_t pid = -1;
  clock_type::time_point started;
  clock_type::time_point restart_at;
  double pause_s = 1;
};

pid_t spawn(const std::vector<std::string>& argv, const std::string& gpu) {
  std::vector<std::string> args = argv;
  args.push_back("--slot");
  args.push_back("gpu" + gpu);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // the supervisor gone (even killed): finish the jobs in hand and exit
  if (::getppid() != parent) _exit(0);
  ::setenv("CUDA_VISIBLE_DEVICES", gpu.c_str(), 1);
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  ::execv("/proc/self/exe", cargv.data());
  _exit(127);
}

}  // namespace

int supervise_slots(const std::vector<std::string>& argv, const std::vector<std::string>& gpu_ids,
                    const std::atomic<bool>& stop) {
  std::vector<Child> children;
  for (const auto& gpu : gpu_ids) children.push_back(Child{gpu, -1, {}, clock_type::now(), 1});
  int exit_code = 0;
  while (!stop && exit_code == 0) {
    for (auto& c : children) {
      if (c.pid > 0 || clock_type::now() < c.restart_at) continue;
      c.pid = spawn(argv, c.gpu);
      c.started = clock_type::now();
      std::cerr << "kernelrl worker: slot gpu" << c.gpu << " started (pid " << c.pid << ")" << std::endl;
    }
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, WNOHANG);
    if (done <= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    for (auto& c : children) {
      if (c.pid != done) continue;
      c.pid = -1;
      const bool usage = WIFEXITED(status) && WEXITSTATUS(status) == 64;
      const double ran_s = std::chrono::duration<double>(clock_type::now() - c.started).count();
      c.pause_s = ran_s > 60 ? 1 : std::min(c.pause_s * 2, 60.0);
      c.restart_at = clock_type::now() + std::chrono::milliseconds(static_cast<long>(c.pause_s * 1000));
      std::cerr << "kernelrl worker: slot gpu" << c.gpu << " (pid " << done << ") "
                << (WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                        : "exited with " + std::to_string(WEXITSTATUS(status)))
                << (usage ? "; stopping" : "; restarting in " + std::to_string(static_cast<int>(c.pause_s)) + " s")
                << std::endl;
      if (usage) exit_code = 64;
    }
  }
  for (auto& c : children) {
    if (c.pid > 0) ::kill(c.pid, SIGTERM);
  }
  for (auto& c : children) {
    if (c.pid <= 0) continue;
    int status = 0;
    ::waitpid(c.pid, &status, 0);  // each finishes the jobs in hand (bounded by its phase limits)
  }
  return exit_code;
}

}  // namespace kernelrl::service
