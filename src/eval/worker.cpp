#include "eval/worker.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"
#include "common/hash.hpp"
#include "common/line_io.hpp"
#include "eval/child_eval.hpp"
#include "sandbox/child_process.hpp"
#include "task/python_runtime.hpp"
#include "task/task.hpp"

namespace kernelrl::eval {

namespace {

void write_line(int fd, const nlohmann::json& j) {
  common::write_all(fd, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

// Tasks are loaded in the worker (no CUDA needed) and reused by every child; reloaded when the
// file's content changes.
class TaskCache {
 public:
  common::Expected<const task::TaskModule*> get(const std::string& path) {
    auto source = common::read_file(path, 16u << 20);
    if (!source) return source.error();
    std::string hash = common::hash_hex(*source);
    auto it = tasks_.find(path);
    if (it != tasks_.end() && it->second.hash == hash) return &it->second;
    auto loaded = task::load_task(path);
    if (!loaded) return loaded.error();
    tasks_.erase(path);
    return &tasks_.emplace(path, std::move(*loaded)).first->second;
  }

 private:
  std::map<std::string, task::TaskModule> tasks_;
};

std::map<std::string, double> phase_limits(const eval::EvalOptions& o) {
  return {{"setup", o.timeout_setup_s},       {"load", o.timeout_load_s},     {"correctness", o.timeout_correctness_s},
          {"timing", o.timeout_timing_s},     {"ref_timing", o.timeout_timing_s}};
}

nlohmann::json outcome_json(const sandbox::ChildOutcome& o) {
  return {{"has_record", o.has_record}, {"last_phase", o.last_phase}, {"timed_out", o.timed_out},
          {"phase_limit_s", o.phase_limit_s}, {"exit_code", o.exit_code}, {"term_signal", o.term_signal},
          {"end", sandbox::describe_end(o)}, {"stderr_tail", o.stderr_tail}, {"wall_ms", o.wall_ms}};
}

// Serves requests one at a time. After each evaluation it forks the next child ahead of time
// ("warm"): that child creates its CUDA context while the worker waits for the next request, and
// is handed the request over its own pipe.
class Server {
 public:
  Server(int in_fd, int out_fd, std::filesystem::path scratch_root)
      : in_fd_(in_fd), out_fd_(out_fd), scratch_root_(std::move(scratch_root)) {}
  ~Server() { drop_warm(); }

  nlohmann::json serve(const nlohmann::json& request) {
    nlohmann::json reply = {{"id", request.value("id", 0)}};
    eval::ChildRequest child = request.value("child", eval::ChildRequest{});
    const std::string task_path = request.value("task", "");
    const task::TaskModule* task = nullptr;
    if (child.op != "device_info") {
      auto t = tasks_.get(task_path);  // bad tasks are reported from here, without a child
      if (!t) {
        reply["error"] = t.error().message;
        return reply;
      }
      task = *t;
    }
    sandbox::ChildOutcome outcome;
    std::filesystem::path scratch;
    if (warm_ && warm_->device == child.device && child.op != "device_info" &&
        common::write_all(warm_->handle.request_fd, nlohmann::json{{"task", task_path}, {"child", child}}.dump() + "\n")) {
      scratch = warm_->scratch;
      outcome = sandbox::watch_child(warm_->handle, phase_limits(child.options), child.options.timeout_setup_s);
      warm_.reset();
    } else {
      drop_warm();
      auto dir = common::make_temp_dir(scratch_root_, "child-");
      if (!dir) {
        reply["error"] = dir.error().message;
        return reply;
      }
      scratch = *dir;
      outcome = sandbox::run_child_process(
          [&](int report_fd) {
            enter_child();
            eval::run_child(task, child, report_fd);
          },
          scratch.string(), phase_limits(child.options), child.options.timeout_setup_s);
    }
    std::error_code ec;
    std::filesystem::remove_all(scratch, ec);
    if (child.op != "device_info") spawn_warm(child.device);
    if (outcome.has_record) reply["record"] = outcome.record;
    reply["outcome"] = outcome_json(outcome);
    return reply;
  }

 private:
  struct Warm {
    sandbox::ChildHandle handle;
    std::filesystem::path scratch;
    std::string device;
  };

  // In a fresh child: the worker's own pipes are none of its business.
  void enter_child() {
    ::close(in_fd_);
    ::close(out_fd_);
    task::python_after_fork_child();
  }

  void spawn_warm(const std::string& device) {
    auto dir = common::make_temp_dir(scratch_root_, "child-");
    if (!dir) return;  // the next request forks a child of its own
    Warm w{{}, *dir, device};
    w.handle = sandbox::spawn_child(
        [this, device](int report_fd, int request_fd) {
          enter_child();
          eval::prepare_device(device);
          std::string buffer, line;
          if (!common::read_line(request_fd, buffer, line)) return;  // discarded unused
          auto request = nlohmann::json::parse(line, nullptr, false);
          if (request.is_discarded()) return;
          eval::run_child_loading_task(request.value("task", ""), request.value("child", eval::ChildRequest{}),
                                       report_fd);
        },
        dir->string());
    if (w.handle.pid > 0) warm_ = std::move(w);
  }

  void drop_warm() {
    if (!warm_) return;
    sandbox::discard_child(warm_->handle);
    std::error_code ec;
    std::filesystem::remove_all(warm_->scratch, ec);
    warm_.reset();
  }

  int in_fd_, out_fd_;
  std::filesystem::path scratch_root_;
  TaskCache tasks_;
  std::optional<Warm> warm_;
};

}  // namespace

int worker_main(int in_fd, int out_fd) {
  // Stray prints from tasks go to stderr, never into the reply pipe; a dead child's pipe must
  // not kill the worker.
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  ::signal(SIGPIPE, SIG_IGN);
  auto started = task::start_python();
  auto scratch_root = common::make_temp_dir(std::filesystem::temp_directory_path(), "kernelrl-worker-");
  {
    Server server(in_fd, out_fd, scratch_root ? *scratch_root : std::filesystem::path());
    std::string buffer, line;
    while (common::read_line(in_fd, buffer, line)) {
      auto request = nlohmann::json::parse(line, nullptr, false);
      nlohmann::json reply;
      if (request.is_discarded()) {
        reply = {{"id", 0}, {"error", "worker: malformed request"}};
      } else if (!started) {
        reply = {{"id", request.value("id", 0)}, {"error", started.error().message}};
      } else if (!scratch_root) {
        reply = {{"id", request.value("id", 0)}, {"error", scratch_root.error().message}};
      } else {
        reply = server.serve(request);
      }
      write_line(out_fd, reply);
    }
  }
  sandbox::reap_children(true);
  if (scratch_root) {
    std::error_code ec;
    std::filesystem::remove_all(*scratch_root, ec);
  }
  return 0;
}

}  // namespace kernelrl::eval
