#include "sandbox/worker_client.hpp"

#include "common/line_io.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kernelrl::sandbox {

common::Expected<std::unique_ptr<WorkerClient>> WorkerClient::spawn(const std::string& binary,
                                                                    std::vector<std::string> extra_args) {
  std::unique_ptr<WorkerClient> w(new WorkerClient(binary, std::move(extra_args)));
  if (auto s = w->start(); !s) return s.error();
  return w;
}

common::Fallible WorkerClient::start() {
  ::signal(SIGPIPE, SIG_IGN);  // a dead worker must show up as a failed write, not kill us
  int down[2], up[2];  // down: orchestrator -> worker, up: worker -> orchestrator
  if (::pipe2(down, O_CLOEXEC) != 0 || ::pipe2(up, O_CLOEXEC) != 0) {
    return common::make_error(std::string("cannot create pipes for the worker: ") + std::strerror(errno));
  }
  std::vector<std::string> args{binary_, "worker", "--in", std::to_string(down[0]), "--out", std::to_string(up[1])};
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return common::make_error(std::string("cannot fork the worker: ") + std::strerror(errno));
  if (pid == 0) {
    // Keep exactly the two pipe ends open across exec.
    ::fcntl(down[0], F_SETFD, 0);
    ::fcntl(up[1], F_SETFD, 0);
    ::execv(binary_.c_str(), argv.data());
    _exit(127);
  }
  ::close(down[0]);
  ::close(up[1]);
  pid_ = pid;
  to_worker_ = down[1];
  from_worker_ = up[0];
  buffer_.clear();
  return common::Ok{};
}

void WorkerClient::stop() {
  if (to_worker_ >= 0) ::close(to_worker_);
  if (from_worker_ >= 0) ::close(from_worker_);
  to_worker_ = from_worker_ = -1;
  if (pid_ > 0) {
    int status = 0;
    // The worker exits when its request pipe closes, once its children (and their CUDA contexts)
    // are gone; give it time for that, then insist.
    for (int i = 0; i < 250 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i) ::usleep(20000);
    if (::waitpid(pid_, &status, WNOHANG) == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
  }
  pid_ = -1;
}

WorkerClient::~WorkerClient() { stop(); }

common::Expected<nlohmann::json> WorkerClient::request(nlohmann::json req) {
  std::lock_guard<std::mutex> lock(mutex_);
  long id = next_id_++;
  req["id"] = id;
  std::string reply_line;
  bool sent = common::write_all(to_worker_, req.dump() + "\n");
  while (sent && common::read_line(from_worker_, buffer_, reply_line)) {
    auto reply = nlohmann::json::parse(reply_line, nullptr, false);
    if (reply.is_discarded()) return common::make_error("worker sent a malformed reply");
    if (reply.value("id", -1L) == id) return reply;  // anything else is a stale reply
  }
  // The worker is gone (it should never die; a child's failure never reaches it).
  stop();
  auto restarted = start();
  return common::make_error(std::string("the evaluation worker (") + binary_ + " worker) died during the request" +
                            (restarted ? "; it was restarted" : "; restarting failed: " + restarted.error().message));
}

}  // namespace kernelrl::sandbox
