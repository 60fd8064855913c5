#include "eval/worker.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"
#include "common/hash.hpp"
#include "common/line_io.hpp"
#include "common/report_mac.hpp"
#include "eval/child_eval.hpp"
#include "eval/phases.hpp"
#include "eval/protocol.hpp"
#include "eval/runner_process.hpp"
#include "sandbox/child_process.hpp"
#include "sandbox/device_lock.hpp"
#include "eval/tamper_guard.hpp"
#include "task/python_runtime.hpp"
#include "task/task.hpp"

namespace kernelrl::eval {

namespace {

// Children a worker keeps forked ahead, whatever a request asks for.
constexpr std::size_t kMaxWarmChildren = 4;

// How long a worker waits, its device lock held, for a GPU child whose evaluation did not end OK
// to be gone (a reference timed alone, or a device's description, is not waited for).
constexpr std::chrono::milliseconds kTeardownWait{10000};

// True when the child reported an evaluation that ended OK.
bool ended_ok(const sandbox::ChildOutcome& o) {
  if (!o.has_record || !o.record.is_object() || !o.record.contains("result")) return false;
  const auto& result = o.record["result"];
  return result.is_object() && result.value("status", "") == "OK";
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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

ChildEnd child_end(const sandbox::ChildOutcome& o, double lock_wait_ms) {
  ChildEnd end;
  end.has_record = o.has_record;
  end.last_phase = o.last_phase;
  end.timed_out = o.timed_out;
  end.phase_limit_s = o.phase_limit_s;
  end.exit_code = o.exit_code;
  end.term_signal = o.term_signal;
  end.end = sandbox::describe_end(o);
  end.stderr_tail = o.stderr_tail;
  end.wall_ms = o.wall_ms;
  end.lock_wait_ms = lock_wait_ms;
  return end;
}

WorkerReply error_reply(std::string message) {
  WorkerReply reply;
  reply.error = std::move(message);
  return reply;
}

// Serves requests one at a time, each in a fresh child. When a request arrives it goes to the
// oldest child forked ahead of time ("warm", which has created its CUDA context meanwhile) over
// that child's own pipe, and warm children are forked at once up to `n_warm` (WorkerSettings::
// warm_children): creating a context takes longer than evaluating a small kernel.
// A candidate runs in a process of its own, which its child starts at the child's start
// (eval/runner_process.hpp): warm children get the kind the last evaluation had.
// The worker holds the device lock for its child, in the mode the child's current phase needs.
class Server {
 public:
  Server(std::filesystem::path scratch_root, std::optional<sandbox::DeviceLock> device_lock, std::size_t n_warm)
      : scratch_root_(std::move(scratch_root)),
        device_lock_(std::move(device_lock)),
        n_warm_(std::clamp<std::size_t>(n_warm, 1, kMaxWarmChildren)) {}
  ~Server() { drop_warm(); }

  WorkerReply serve(const WorkerRequest& request) {
    const eval::ChildRequest& child = request.child;
    const std::string& task_path = request.task;
    const task::TaskModule* task = nullptr;
    // A task nobody vouched for is loaded only by a fresh child that confined itself first.
    const bool confined_task = child.confine_task && child.op != ChildOp::DEVICE_INFO;
    if (child.op != ChildOp::DEVICE_INFO && !confined_task) {
      auto t = tasks_.get(task_path);  // bad tasks are reported from here, without a child
      if (!t) return error_reply(t.error().message);
      task = *t;
    }
    // A child with a runner serves a request that needs none too (the runner idles and dies with it).
    const RunnerKind runner = runner_kind(child);
    if (child.format == common::Format::KERNELBENCH && runner == RunnerKind::NONE && !torch_settled_) {
      // A kernelbench candidate in the child (a baseline): torch's one-time lazy set-up, which its
      // operator audit would trigger, once here instead of in every child; children forked before
      // it would each redo it (seconds), so they are replaced.
      eval::settle_torch_lazy_state();
      torch_settled_ = true;
      drop_warm();
    }
    if (child.op == ChildOp::EVAL) expect_runner_ = runner;
    // The key this evaluation's child signs its report lines with: only the child has it.
    const std::string key = common::new_report_key();
    if (key.empty()) return error_reply("cannot draw a key for the evaluation's report channel (getrandom failed)");
    std::optional<Child> current;
    if (!warm_.empty() && warm_.front().device == child.device &&
        (warm_.front().runner == runner || runner == RunnerKind::NONE) &&
        child.op != ChildOp::DEVICE_INFO && !confined_task &&
        common::write_all(warm_.front().handle.request_fd,
                          nlohmann::json(WorkerRequest{task_path, child, steady_ns(), key}).dump() + "\n")) {
      current = std::move(warm_.front());
      warm_.pop_front();
    } else {
      if (!confined_task) drop_warm();  // warm children stay for the trusted tasks to come
      current = spawn(child.device, runner, [task, child, key, task_path](int report_fd, int request_fd) {
        ChildStart start;
        start.report_key = key;
        if (task != nullptr) {
          eval::run_child(task, child, report_fd, request_fd, start);
        } else {  // DEVICE_INFO, or a task this child loads itself (confined)
          eval::run_child_loading_task(task_path, child, report_fd, request_fd, start);
        }
      });
      if (!current) return error_reply("cannot start an evaluation process in " + scratch_root_.string());
    }
    current->handle.report_key = key;
    // The next children create their CUDA contexts while this one runs.
    if (child.op != ChildOp::DEVICE_INFO && !confined_task) {
      while (warm_.size() < n_warm_) spawn_warm(child.device, expect_runner_);
    }
    double lock_wait_ms = 0;  // the child held at a phase boundary while other workers' children use the device
    const pid_t child_pid = current->handle.pid;
    sandbox::ChildOutcome outcome = sandbox::watch_child(
        current->handle, fixed_phase_limits_s(child.options), child.options.timeout_setup_s,
        [this, &lock_wait_ms](const std::string& phase) {
          if (!device_lock_) return;
          const auto t0 = std::chrono::steady_clock::now();
          device_lock_->acquire(lock_mode_for(phase, device_lock_->mode()));
          lock_wait_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        });
    // A GPU evaluation that did not end OK may leave device memory behind until its processes'
    // contexts are torn down (a candidate that hoarded memory until its check: 140 GiB on the H200,
    // where an honest evaluation's timer then found the device full): with its lock still held, so
    // no timing phase starts meanwhile, its processes are waited for (at most kTeardownWait).
    if (device_lock_ && child.device == "cuda" && child.op == ChildOp::EVAL && !ended_ok(outcome)) {
      (void)sandbox::wait_for_group_end(child_pid, kTeardownWait);
    }
    if (device_lock_) device_lock_->acquire(sandbox::DeviceLock::Mode::NONE);
    (void)common::remove_tree(current->scratch);
    WorkerReply reply;
    if (outcome.has_record) reply.record = outcome.record;
    reply.outcome = child_end(outcome, lock_wait_ms);
    return reply;
  }

 private:
  struct Child {
    sandbox::ChildHandle handle;
    std::filesystem::path scratch;
    std::string device;
    RunnerKind runner = RunnerKind::NONE;  // the runner it forked at its start
  };

  // In a fresh child (spawn_child has already closed every descriptor but its own pipes, the
  // worker's included).
  void enter_child() { task::python_after_fork_child(); }

  // Forks a child in a fresh scratch folder that runs `body(report_fd, request_fd)`, first starting
  // its candidate's runner of kind `runner`.
  std::optional<Child> spawn(const std::string& device, RunnerKind runner, const std::function<void(int, int)>& body) {
    auto dir = common::make_temp_dir(scratch_root_, "child-");
    if (!dir) return std::nullopt;
    Child w{{}, *dir, device, runner};
    w.handle = sandbox::spawn_child(
        [this, &body, &device, runner](int report_fd, int request_fd) {
          enter_child();
          if (runner != RunnerKind::NONE) eval::start_runner_ahead(runner, device);
          body(report_fd, request_fd);
        },
        dir->string());
    if (w.handle.pid <= 0) {
      (void)common::remove_tree(*dir);
      return std::nullopt;
    }
    return w;
  }

  // A child that prepares the device now and waits for its request.
  void spawn_warm(const std::string& device, RunnerKind runner) {
    auto warm = spawn(device, runner, [device](int report_fd, int request_fd) {
      const std::int64_t start_ns = steady_ns();
      eval::prepare_device(device);
      const std::int64_t ready_ns = steady_ns();
      const double prepare_ms = (ready_ns - start_ns) / 1e6;
      std::string buffer, line;
      if (!common::read_line(request_fd, buffer, line)) return;  // discarded unused
      auto line_json = nlohmann::json::parse(line, nullptr, false);
      if (line_json.is_discarded()) return;
      const WorkerRequest request = line_json.get<WorkerRequest>();
      // How long the request waited for this child's CUDA context.
      const double waited_ms = std::max<std::int64_t>(0, ready_ns - request.handed_at_ns.value_or(ready_ns)) / 1e6;
      eval::run_child_loading_task(request.task, request.child, report_fd, request_fd,
                                   eval::ChildStart{waited_ms, prepare_ms, 0, request.report_key});
    });
    if (warm) warm_.push_back(std::move(*warm));
  }

  void drop_warm() {
    for (auto& w : warm_) {
      sandbox::discard_child(w.handle);
      (void)common::remove_tree(w.scratch);
    }
    warm_.clear();
  }

  std::filesystem::path scratch_root_;
  std::optional<sandbox::DeviceLock> device_lock_;  // shared with the engine's other workers
  std::size_t n_warm_;                              // warm children kept
  TaskCache tasks_;
  std::deque<Child> warm_;  // forked ahead of the next requests, oldest first
  bool torch_settled_ = false;  // eval::settle_torch_lazy_state() has run in this process
  RunnerKind expect_runner_ = RunnerKind::NONE;  // the last evaluation's: warm children get one
};

}  // namespace

int worker_main(int in_fd, int out_fd, const WorkerSettings& settings) {
  // Stray prints from tasks go to stderr, never into the reply pipe; a dead child's pipe must
  // not kill the worker.
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  ::signal(SIGPIPE, SIG_IGN);
  // A killed child's runner (eval/host_runner.hpp) is orphaned to us, not to init, and reaped here.
  (void)sandbox::become_subreaper();
  // A worker whose parent is gone (the batch was killed) stops the candidate it watches at once
  // rather than at the end of that phase's limit, then ends on its closed request pipe.
  sandbox::end_watched_children_when_orphaned(::getppid());
  // Read by CUDA when a child creates its context (the worker never does).
  if (!settings.gpu.empty()) ::setenv("CUDA_VISIBLE_DEVICES", settings.gpu.c_str(), 1);
  if (settings.cuda_max_connections > 0) {
    ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", std::to_string(settings.cuda_max_connections).c_str(), 0);
  }
  auto started = task::start_python();
  auto scratch_root = common::make_temp_dir(
      settings.scratch_in.empty() ? std::filesystem::temp_directory_path() : std::filesystem::path(settings.scratch_in),
      "kernelrl-worker-");
  {
    std::optional<sandbox::DeviceLock> device_lock;
    if (!settings.device_lock_dir.empty()) {
      auto opened = sandbox::DeviceLock::open(settings.device_lock_dir);
      if (!opened) {
        std::fprintf(stderr, "kernelrl worker: %s\n", opened.error().message.c_str());
        return 1;
      }
      device_lock = std::move(*opened);
    }
    Server server(scratch_root ? *scratch_root : std::filesystem::path(), std::move(device_lock),
                  settings.warm_children);
    std::string buffer, line;
    while (common::read_line(in_fd, buffer, line)) {
      auto request = nlohmann::json::parse(line, nullptr, false);
      WorkerReply reply;
      if (request.is_discarded()) {
        reply = error_reply("worker: malformed request");
      } else if (!started) {
        reply = error_reply(started.error().message);
      } else if (!scratch_root) {
        reply = error_reply(scratch_root.error().message);
      } else {
        reply = server.serve(request.get<WorkerRequest>());
      }
      nlohmann::json line_out = reply;
      line_out["id"] = request.is_discarded() ? 0 : request.value("id", 0);
      write_line(out_fd, line_out);
    }
  }
  sandbox::reap_children(true);
  if (scratch_root) {
    (void)common::remove_tree(*scratch_root);
  }
  return 0;
}

}  // namespace kernelrl::eval
