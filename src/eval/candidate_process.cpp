#include "eval/candidate_process.hpp"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"
#include "eval/gpu.hpp"
#include "eval/kernelbench_runner.hpp"
#include "eval/runner_process.hpp"
#include "eval/timing.hpp"
#include "sandbox/confinement.hpp"

namespace kernelrl::eval {

namespace {

// Room for one call's tensors twice over: get_inputs() may draw sizes that vary a little.
std::size_t tensor_bytes(const ChildSetup& s) { return 2 * s.call_tensor_bytes + (1u << 20); }

// Idle calls in the calibration: on a GPU enough for a median within a microsecond or two of the
// one a hundred give on the H200 (docs/security.md), few enough to hold the device alone only
// briefly; on the CPU, where each is preceded by a sweep of the last-level cache, fewer.
constexpr int kMaxIdleCallsGpu = 30;
constexpr int kMaxIdleCallsCpu = 10;

// What the child refuses of a call's record: under the strict rules a kernelbench call's PyTorch
// operators beyond allocation, views and copies, and kernels neither its own nor those operators';
// a native candidate's kernels that are not its own (a library's).
CallRules rules_for(const ChildSetup& s) {
  CallRules r;
  if (s.req.format == common::Format::KERNELBENCH) {
    const bool strict = s.req.rules == common::RuleSet::STRICT && s.req.options.torch_op_audit;
    r.torch_operators = strict;
    r.foreign_kernels = strict && s.cuda;
  } else {
    r.foreign_kernels = s.cuda;
  }
  return r;
}

// The call's tensors after the header, in the memory file the runner maps (a CPU runner), sized
// past the file-size limit the child confines itself with (a call's tensors often pass 64 MB).
void grow_pages(sandbox::SharedPages& pages, std::size_t n_bytes) {
  if (auto grown = sandbox::with_file_size_limit_lifted(n_bytes, [&] { return pages.grow(n_bytes); }); !grown) {
    throw TaskError{"cannot start the candidate's process: " + grown.error().message};
  }
}

// The candidate's files (its library, or a kernelbench candidate's folder with its built
// extensions) put in this child's scratch folder, the only place the candidate's process may read
// outside the system's trees (runner/confine.hpp): each file linked, or copied across file systems.
std::string staged_candidate(const ChildSetup& s) {
  const std::filesystem::path from = s.req.artifact;
  const std::filesystem::path to = std::filesystem::current_path() / "candidate";
  const bool folder = s.req.format == common::Format::KERNELBENCH;
  if (!folder) {
    std::filesystem::create_directory(to);
  }
  const std::filesystem::path target = folder ? to : to / from.filename();
  if (auto staged = common::link_or_copy_tree(from, target); !staged) {
    throw TaskError{"cannot put the candidate's files where its process may read them: " + staged.error().message};
  }
  return target.string();
}

}  // namespace

std::unique_ptr<RunnerCandidate> start_candidate_process(const ChildSetup& s, Observations& obs) {
  const RunnerKind kind = runner_kind(s.req);
  if (kind == RunnerKind::NONE) return nullptr;
  StartedRunner started = take_runner(kind);
  const std::size_t bytes = tensor_bytes(s);
  auto* h = reinterpret_cast<runner::Header*>(started.pages.data());
  std::unique_ptr<RunnerCandidate> candidate;
  std::string start;
  const std::string staged = staged_candidate(s);
  if (kind == RunnerKind::KERNELBENCH) {
    const std::size_t pages_bytes = s.cuda ? started.pages.size() : runner::kDataOffset + bytes;
    candidate = kernelbench_runner_candidate(s, std::move(started), bytes, rules_for(s));
    start = kernelbench_start_text(s, staged, pages_bytes);
  } else if (kind == RunnerKind::NATIVE) {
    RunnerMemory memory = device_arena(h, bytes);
    candidate = std::make_unique<RunnerCandidate>(std::move(started.pages), started.pid, std::move(memory), rules_for(s));
    start = nlohmann::json{{"artifact", staged}}.dump();
  } else {
    grow_pages(started.pages, runner::kDataOffset + bytes);
    RunnerMemory memory;
    memory.data = started.pages.data() + runner::kDataOffset;
    memory.bytes = bytes;
    start = nlohmann::json{{"artifact", staged}, {"pages_bytes", started.pages.size()}}.dump();
    candidate = std::make_unique<RunnerCandidate>(std::move(started.pages), started.pid, std::move(memory), rules_for(s));
  }
  obs.isolation["candidate_process"] = candidate->start(start);
  return candidate;
}

void calibrate_idle_calls(const ChildSetup& s, RunnerCandidate& runner, Observations& obs) {
  auto t0 = child_clock::now();
  auto timer = CallTimer::create(s.cuda, s.stream, s.l2_bytes, runner.in_another_cuda_context());
  if (!timer) throw TaskError{"cannot set up the timer: " + timer.error().message};
  EvalOptions options = s.req.options;
  options.n_warmup = 2;
  options.min_reps = options.max_reps = std::clamp(s.req.options.max_reps, 5, s.cuda ? kMaxIdleCallsGpu : kMaxIdleCallsCpu);
  auto times = (*timer)->run([&](int) { return runner.idle_call(); }, options, {}, {}, [&](int) { return runner.arm(); });
  if (!times) throw TaskError{"the idle calls before loading the candidate failed: " + times.error().message};
  obs.isolation["timed_apart"] = runner.set_idle_calls(*times);
  obs.phases_ms["calibration"] = ms_since(t0);
}

LoadOutcome load_in_candidate_process(const ChildSetup& s, std::unique_ptr<RunnerCandidate> runner) {
  if (auto failed = runner->load()) return std::move(*failed);
  if (s.req.format != common::Format::KERNELBENCH) {
    if (auto placed = runner->place_params(s.params); !placed) throw TaskError{placed.error().message};
    if (s.cuda) {
      if (auto settled = gpu::synchronize_and_check(); !settled) throw TaskError{settled.error().message};
    }
  }
  LoadOutcome out;
  out.candidate = std::move(runner);
  return out;
}

}  // namespace kernelrl::eval
