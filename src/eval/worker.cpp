#include "eval/worker.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
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

nlohmann::json serve(const nlohmann::json& request, TaskCache& tasks, const std::filesystem::path& scratch_root) {
  nlohmann::json reply = {{"id", request.value("id", 0)}};
  eval::ChildRequest child = request.value("child", eval::ChildRequest{});
  const task::TaskModule* task = nullptr;
  if (child.op != "device_info") {
    auto t = tasks.get(request.value("task", ""));
    if (!t) {
      reply["error"] = t.error().message;
      return reply;
    }
    task = *t;
  }
  auto scratch = common::make_temp_dir(scratch_root, "child-");
  if (!scratch) {
    reply["error"] = scratch.error().message;
    return reply;
  }
  sandbox::ChildOutcome outcome = sandbox::run_child_process(
      [&](int report_fd) {
        task::python_after_fork_child();
        eval::run_child(task, child, report_fd);
      },
      scratch->string(), phase_limits(child.options), child.options.timeout_setup_s);
  std::error_code ec;
  std::filesystem::remove_all(*scratch, ec);
  if (outcome.has_record) reply["record"] = outcome.record;
  reply["outcome"] = outcome_json(outcome);
  return reply;
}

}  // namespace

int worker_main(int in_fd, int out_fd) {
  // Stray prints from tasks go to stderr, never into the reply pipe.
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  auto started = task::start_python();
  auto scratch_root = common::make_temp_dir(std::filesystem::temp_directory_path(), "kernelrl-worker-");
  TaskCache tasks;
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
      reply = serve(request, tasks, *scratch_root);
    }
    write_line(out_fd, reply);
  }
  sandbox::reap_children(true);
  if (scratch_root) {
    std::error_code ec;
    std::filesystem::remove_all(*scratch_root, ec);
  }
  return 0;
}

}  // namespace kernelrl::eval
