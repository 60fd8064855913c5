#include "eval/engine.hpp"

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <future>
#include <thread>

#include "common/fs.hpp"
#include "common/hash.hpp"
#include "common/provenance.hpp"
#include "compile/kernelbench_warnings.hpp"
#include "eval/phases.hpp"
#include "eval/protocol.hpp"
#include "eval/speed_of_light.hpp"
#include "sandbox/syscall_filter.hpp"

namespace kernelrl::eval {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {

// Evaluations again after the evaluator found the device's memory full (Engine::run_in_worker).
constexpr int kDeviceMemoryRetries = 3;
constexpr std::chrono::milliseconds kDeviceMemoryPause{1000};

constexpr std::uint64_t kMaxCandidateBytes = 1u << 20;

std::string utc_timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Sends one request to `worker` and reads its typed reply. An Error when the worker failed, sent
// something that is not a reply, or could not run a child for it (WorkerReply::error).
common::Expected<WorkerReply> ask(sandbox::WorkerClient& worker, const WorkerRequest& request) {
  auto raw = worker.request(nlohmann::json(request));
  if (!raw) return raw.error();
  auto reply = parse_worker_reply(*raw);
  if (!reply) return reply.error();
  if (reply->error) return common::make_error(*reply->error);
  return reply;
}

}  // namespace

struct Engine::Prepared {
  common::Format format = common::Format::NATIVE;
  common::RuleSet rules = common::RuleSet::STRICT;
  std::string device;
  std::string task_hash;
  std::optional<task::ManifestEntry> manifest;  // the task's entry in manifest.json beside it, if any
  std::shared_future<compile::CompileResult> compiled;
  std::optional<EvalResult> early;  // decided before any compile (file over the size limit)
  std::vector<std::string> warnings;  // kernelbench acceptance: what KernelBench's checker would flag
  clock_type::time_point t_start;
};

common::Expected<std::unique_ptr<Engine>> Engine::create(EngineConfig config) {
  std::unique_ptr<Engine> e(new Engine());
  auto toolchain = compile::detect_toolchain();
  if (!toolchain) return toolchain.error();
  fs::path cache = config.cache_dir.empty() ? common::cache_root() / "compile" : config.cache_dir;
  e->compiler_ = std::make_unique<compile::Compiler>(*toolchain, cache);
  e->pool_ = std::make_unique<compile::CompilePool>(*e->compiler_, config.n_compile_threads);
  for (const auto& folder : config.untrusted_task_folders) {
    std::error_code ec;
    e->untrusted_roots_.push_back(fs::weakly_canonical(fs::absolute(folder), ec));
  }
  // One folder of the engine's own: the device lock and the workers' scratch folders (their
  // children's logs), removed with the engine even where a worker had to be killed.
  auto own_dir = common::make_temp_dir(fs::temp_directory_path(), "kernelrl-engine-");
  if (!own_dir) return own_dir.error();
  e->own_dir_ = *own_dir;
  const fs::path lock_dir = *own_dir / "device-lock";
  std::error_code ec;
  fs::create_directory(lock_dir, ec);
  if (ec) return common::make_error(lock_dir.string() + ": cannot create: " + ec.message());
  std::vector<std::string> worker_args{"--device-lock",       lock_dir.string(),
                                       "--scratch-in",        own_dir->string(),
                                       "--cuda-connections",  std::to_string(config.cuda_max_connections),
                                       "--warm-children",     std::to_string(config.warm_children)};
  if (!config.gpu.empty()) worker_args.insert(worker_args.end(), {"--gpu", config.gpu});
  auto first = sandbox::WorkerClient::spawn(config.worker_binary, worker_args);
  if (!first) return first.error();
  e->workers_.push_back(std::move(*first));
  const std::string wanted = config.options.device;
  if (wanted != "auto" && wanted != "cuda" && wanted != "cpu") {
    return common::make_error("--device: '" + wanted + "' is not one of auto, cuda, cpu");
  }
  e->device_info_ = {{"cuda_available", false}};
  if (wanted != "cpu") {
    ChildRequest probe;
    probe.op = ChildOp::DEVICE_INFO;
    auto reply = ask(*e->workers_.front(), WorkerRequest{"", probe, std::nullopt});
    if (!reply) return reply.error();
    auto record = reply->record ? parse_child_record(*reply->record) : common::make_error("no record");
    if (!record || !record->device_info) {
      return common::make_error("the device probe failed: " + nlohmann::json(reply->outcome).dump());
    }
    e->device_info_ = *record->device_info;
  }
  bool has_gpu = e->device_info_.value("cuda_available", false);
  if (wanted == "cuda" && !has_gpu) return common::make_error("--device cuda: no usable GPU here (torch sees none)");
  e->device_ = wanted == "auto" ? (has_gpu ? "cuda" : "cpu") : wanted;
  if (config.cuda_arch.empty()) config.cuda_arch = e->device_info_.value("compute_capability", std::string("90"));
  if (config.n_workers == 0) config.n_workers = e->device_ == "cuda" ? 4 : 1;
  while (e->workers_.size() < config.n_workers) {
    auto more = sandbox::WorkerClient::spawn(config.worker_binary, worker_args);
    if (!more) return more.error();
    e->workers_.push_back(std::move(*more));
  }
  for (auto& w : e->workers_) e->idle_workers_.push_back(w.get());
  e->config_ = std::move(config);
  return e;
}

Engine::~Engine() {
  workers_.clear();  // each worker exits and is reaped
  if (!own_dir_.empty()) (void)common::remove_tree(own_dir_);
}

class Engine::WorkerLease {
 public:
  WorkerLease(Engine& engine, sandbox::WorkerClient* worker) : engine_(engine), worker_(worker) {}
  WorkerLease(const WorkerLease&) = delete;
  WorkerLease& operator=(const WorkerLease&) = delete;
  ~WorkerLease() {
    {
      std::lock_guard<std::mutex> lock(engine_.workers_mutex_);
      engine_.idle_workers_.push_back(worker_);
    }
    engine_.worker_freed_.notify_one();
  }
  sandbox::WorkerClient* operator->() const { return worker_; }
  sandbox::WorkerClient& operator*() const { return *worker_; }

 private:
  Engine& engine_;
  sandbox::WorkerClient* worker_;
};

Engine::WorkerLease Engine::lease_worker() {
  std::unique_lock<std::mutex> lock(workers_mutex_);
  worker_freed_.wait(lock, [&] { return !idle_workers_.empty(); });
  sandbox::WorkerClient* w = idle_workers_.back();
  idle_workers_.pop_back();
  return WorkerLease(*this, w);
}

common::Expected<Engine::Prepared> Engine::prepare(const EvalJob& job) {
  Prepared p;
  p.t_start = clock_type::now();
  std::error_code ec;
  if (!fs::is_regular_file(job.task, ec)) return common::make_error(job.task.string() + ": task file not found");
  if (!fs::is_regular_file(job.candidate, ec)) {
    return common::make_error(job.candidate.string() + ": candidate file not found");
  }
  auto format = job.format ? job.format : common::format_from_extension(job.candidate.string());
  if (!format) {
    return common::make_error(job.candidate.string() +
                              ": cannot tell the candidate format from the extension; pass --format native|host|kernelbench");
  }
  p.format = *format;
  p.rules = job.rules.value_or(config_.rules);
  if (job.device && *job.device == "cuda" && device_ != "cuda") {
    return common::make_error(job.candidate.string() + ": needs a GPU and this engine runs on the CPU");
  }
  if (job.device && p.format != common::Format::KERNELBENCH &&
      *job.device != (p.format == common::Format::NATIVE ? "cuda" : "cpu")) {
    return common::make_error(job.candidate.string() + ": a " + std::string(common::to_string(p.format)) +
                              " candidate cannot run on " + *job.device);
  }
  if (const std::string& precision = options_for(job).precision; !precision.empty()) {
    if (!precision_torch_dtype(precision)) {
      return common::make_error("precision '" + precision + "' is not one of fp32, fp16, bf16");
    }
    if (p.format != common::Format::KERNELBENCH) {
      return common::make_error(job.candidate.string() + ": a " + std::string(common::to_string(p.format)) +
                                " candidate takes the task's own dtypes; a precision casts kernelbench candidates only");
    }
  }
  if (p.format == common::Format::HOST) {
    p.device = "cpu";
  } else if (p.format == common::Format::NATIVE) {
    if (device_ != "cuda") {
      return common::make_error(job.candidate.string() +
                                ": native candidates run on a GPU and this engine runs on the CPU (no usable GPU, or "
                                "--device cpu); use a host candidate here");
    }
    p.device = "cuda";
  } else {
    p.device = job.device.value_or(device_);
  }
  auto task_source = common::read_file(job.task, 16u << 20);
  if (!task_source) return task_source.error();
  p.task_hash = common::hash_hex(*task_source);
  auto manifest = task::manifest_entry_for(job.task);
  if (!manifest) return manifest.error();
  p.manifest = std::move(*manifest);

  auto size = fs::file_size(job.candidate, ec);
  if (!ec && size > kMaxCandidateBytes) {
    p.early = make_result(common::Status::FORMAT_ERROR,
                          job.candidate.filename().string() + ": " + std::to_string(size) + " bytes, over the " +
                              std::to_string(kMaxCandidateBytes) + "-byte limit for a candidate");
    return p;
  }
  auto source = common::read_file(job.candidate, kMaxCandidateBytes);
  if (!source) return source.error();
  compile::CompileOptions options;
  options.format = p.format;
  options.rules = p.rules;
  options.cuda_arch = config_.cuda_arch;
  options.use_cache = config_.use_cache;
  options.host_pch = options.parallel_nvcc = config_.fast_native_compile;
  options.system_access_check = config_.system_access_check;
  options.extra_read_roots = config_.compile_read_roots;
  double limit_s = p.format == common::Format::KERNELBENCH ? config_.kernelbench_compile_timeout_s : config_.compile_timeout_s;
  options.time_limit = std::chrono::milliseconds(static_cast<long>(limit_s * 1000));
  if (p.format == common::Format::KERNELBENCH && common::kernelbench_acceptance(p.rules)) {
    const std::string precision = options_for(job).precision;
    p.warnings = compile::kernelbench_warnings(*source, precision.empty() || precision == "fp32");
  }
  p.compiled = pool_->submit(*source, job.candidate.filename().string(), options);
  return p;
}

namespace {

// The result of a child that ended without a record. Before the candidate was loaded that is
// the task's or the machine's failure ("could not evaluate"); after, the candidate's.
common::Expected<EvalResult> result_without_record(const ChildEnd& outcome) {
  const std::string& phase = outcome.last_phase;
  const std::string& end = outcome.end;
  const std::string& tail = outcome.stderr_tail;
  if (!candidate_code_may_have_run(phase)) {
    return common::make_error("the evaluation process failed during setup (" + end + ")" +
                              (tail.empty() ? "" : ":\n" + tail));
  }
  const int signal = outcome.term_signal;
  if (signal == SIGSYS || signal == SIGXFSZ) {
    EvalResult r = make_result(
        common::Status::REJECTED,
        signal == SIGSYS ? std::string("the candidate made a system call the sandbox forbids (") +
                               sandbox::syscall_filter_summary() + ") during " + phase
                         : "the candidate wrote more than 64 MB to its output or a file during " + phase);
    r.error.stderr_tail = tail;
    if (signal == SIGSYS) r.isolation["syscall_filter"] = true;  // SIGSYS is the filter's own verdict
    return r;
  }
  const bool timed_out = outcome.timed_out;
  EvalResult r = make_result(timed_out ? common::Status::TIMEOUT : common::Status::RUNTIME_ERROR,
                             timed_out ? "the candidate's " + end
                                       : "the candidate's process " + std::string(signal ? "was " : "") + end +
                                             " during " + phase);
  r.error.stderr_tail = tail;
  return r;
}

}  // namespace

common::Expected<EvalResult> Engine::run_in_worker(const EvalJob& job, const Prepared& p, const std::string& artifact) {
  ChildRequest child;
  child.artifact = artifact;
  child.candidate = job.candidate.filename().string();
  child.format = p.format;
  child.rules = p.rules;
  child.options = options_for(job);
  child.device = p.device;
  child.confine_task = task_is_untrusted(job.task);
  // A job's own options may time the reference differently: its timing is kept apart.
  const std::string ref_key = p.task_hash + "/" + p.device + (job.options ? "/" + nlohmann::json(child.options).dump() : "");
  if (config_.reuse_ref_timing && child.options.time_kernels) {
    child.cached_ref = ref_timings_.find(ref_key);
    // A task's first candidate: its reference is timed first, alone, in a child where no candidate
    // code runs (a candidate beside it could slow it: RefTimingCache). If that fails, the evaluation
    // times it in pairs and meets the task's failure itself.
    if (!child.cached_ref) {
      if (auto alone = time_reference_alone(job.task, child); alone && ref_timings_.offer(ref_key, *alone)) {
        child.cached_ref = ref_timings_.find(ref_key);
      }
    }
  }
  const auto evaluate_once = [&]() -> common::Expected<EvalResult> {
    auto reply = ask(*lease_worker(), WorkerRequest{fs::absolute(job.task).string(), child, std::nullopt});
    if (!reply) return reply.error();
    const ChildEnd& outcome = reply->outcome;
    if (!reply->record) {
      auto r = result_without_record(outcome);
      if (r) r->phases_ms["child_total"] = outcome.wall_ms;
      return r;
    }
    auto record = parse_child_record(*reply->record);
    if (!record) return common::make_error(job.task.string() + ": " + record.error().message);
    if (record->task_error) return common::make_error(job.task.string() + ": " + *record->task_error);
    if (!record->result) return common::make_error(job.task.string() + ": the evaluation process's record has no result");
    EvalResult r = std::move(*record->result);
    if (record->ref_timing) ref_timings_.offer(ref_key, *record->ref_timing);
    r.phases_ms["child_total"] = outcome.wall_ms;
    r.phases_ms["lock_wait"] = outcome.lock_wait_ms;  // inside child_total, outside every phase
    return r;
  };
  // The evaluator's own work (the reference, the timer, the arena, a process's CUDA context) finding
  // the device's memory full (or, making a context, the device unavailable) is, on a GPU the
  // engine's workers share, another evaluation's candidate holding it for a while (a hoarder until
  // its held-memory check, its context until torn down): not this candidate's verdict nor the
  // task's fault. Evaluated again after a pause, at most kDeviceMemoryRetries times;
  // then the result stands (a candidate that fills the device itself keeps its RUNTIME_ERROR) and
  // an engine error says the device had no memory.
  for (int attempt = 0;; ++attempt) {
    auto r = evaluate_once();
    const bool short_of_memory =
        p.device == "cuda" && (r ? found_device_memory_short(*r) : says_device_memory_ran_out(r.error().message));
    if (!short_of_memory || attempt == kDeviceMemoryRetries) {
      if (attempt > 0 && r) r->isolation["device_memory_retries"] = attempt;
      if (short_of_memory && !r) {
        return common::make_error(r.error().message +
                                  " (the device's memory was still full, or the device unavailable, after " +
                                  std::to_string(attempt + 1) + " tries: other processes hold it)");
      }
      return r;
    }
    std::this_thread::sleep_for(kDeviceMemoryPause * (attempt + 1));
  }
}

common::Expected<EvalResult> Engine::finish(const EvalJob& job, Prepared& p) {
  double t_compile_ms = 0;
  bool cache_hit = false;
  common::Expected<EvalResult> evaluated = p.early ? *p.early : EvalResult{};
  if (!p.early) {
    compile::CompileResult compiled = p.compiled.get();
    t_compile_ms = compiled.t_compile_ms;
    cache_hit = compiled.cache_hit;
    if (compiled.status == common::Status::OK) {
      evaluated = run_in_worker(job, p, compiled.artifact.string());
      check_roofline(job, p, compiled.artifact.string(), evaluated);
    } else {
      evaluated = make_result(compiled.status, compiled.message);
      evaluated->error.compile_log = compiled.log_excerpt;
    }
  }
  if (!evaluated) return evaluated;
  EvalResult& r = *evaluated;
  r.task = job.task.string();
  r.candidate = job.candidate.string();
  r.format = std::string(common::to_string(p.format));
  r.rules = std::string(common::to_string(p.rules));
  r.warnings = p.warnings;
  r.cache_hit = cache_hit;
  r.phases_ms["compile"] = t_compile_ms;
  r.phases_ms["total"] = std::chrono::duration<double, std::milli>(clock_type::now() - p.t_start).count();
  if (r.device.empty()) r.device = p.device;
  const auto& tc = compiler_->toolchain();
  if (p.format == common::Format::NATIVE) r.versions["nvcc"] = tc.nvcc_version;
  if (p.format == common::Format::HOST) r.versions["cxx"] = tc.cxx_version;
  r.commit = common::project_commit();
  r.timestamp = utc_timestamp();
  if (!r.correct) r.speedup = 0;
  if (r.device == "cuda") {
    r.sol_us = roofline(p.manifest, r.device_info).sol_us;
    if (r.correct && r.runtime_us > 0) r.sol_fraction = r.sol_us / r.runtime_us;
  }
  return evaluated;
}

Engine::Roofline Engine::roofline(const std::optional<task::ManifestEntry>& entry, const nlohmann::json& device_info) {
  auto peaks = peaks_for_device(device_info.is_object() ? device_info.value("name", std::string()) : std::string());
  if (!entry || !peaks) return Roofline{};
  return Roofline{speed_of_light(*entry, *peaks).us, plausible_floor_us(*entry, *peaks)};
}

EvalOptions Engine::options_for(const EvalJob& job) const {
  if (!job.options) return config_.options;
  EvalOptions o = *job.options;
  o.device = config_.options.device;  // the engine's; the child runs on ChildRequest::device
  return o;
}

void Engine::check_roofline(const EvalJob& job, const Prepared& p, const std::string& artifact,
                            common::Expected<EvalResult>& evaluated) {
  if (!options_for(job).defenses) return;
  if (!evaluated || !evaluated->correct || evaluated->runtime_us <= 0 || evaluated->device != "cuda") return;
  const double floor_us = roofline(p.manifest, evaluated->device_info).floor_us;
  auto implausible = [&](const EvalResult& r) { return r.correct && r.runtime_us < floor_us; };
  if (!implausible(*evaluated)) return;
  const double first_us = evaluated->runtime_us;
  evaluated = run_in_worker(job, p, artifact);  // measured again, from a fresh process
  if (!evaluated) return;
  evaluated->isolation["roofline_remeasured"] = true;
  if (!implausible(*evaluated)) return;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "implausible speed: %.1f us and %.1f us when re-measured, under the task's roofline floor of %.1f us on "
                "this GPU (its FLOPs at the tensor-core peak or its minimum bytes at the memory peak)",
                first_us, evaluated->runtime_us, floor_us);
  EvalResult rejected = make_result(common::Status::REJECTED, buf);
  rejected.device = evaluated->device;
  rejected.device_info = evaluated->device_info;
  rejected.runtime = evaluated->runtime;
  rejected.ref_runtime = evaluated->ref_runtime;
  rejected.seeds = evaluated->seeds;
  rejected.isolation = evaluated->isolation;
  rejected.phases_ms = evaluated->phases_ms;
  evaluated = std::move(rejected);
}

common::Expected<EvalResult> Engine::evaluate(const EvalJob& job) {
  auto p = prepare(job);
  if (!p) return p.error();
  return finish(job, *p);
}

std::vector<common::Expected<EvalResult>> Engine::evaluate_batch(
    const std::vector<EvalJob>& jobs, const std::function<void(std::size_t, const common::Expected<EvalResult>&)>& on_done) {
  std::vector<std::optional<common::Expected<Prepared>>> prepared(jobs.size());
  std::vector<std::optional<common::Expected<EvalResult>>> results(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) prepared[i] = prepare(jobs[i]);
  auto ready = [&](std::size_t i) {
    const auto& p = *prepared[i];
    if (!p || p->early || !p->compiled.valid()) return true;
    return p->compiled.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  };

  // One thread per worker takes the next job whose compile is done (in job order) and evaluates
  // it; the calling thread reports completions.
  std::mutex mutex;
  std::condition_variable done_cv;
  std::vector<bool> claimed(jobs.size(), false);
  std::vector<std::size_t> finished;  // completion order, not yet reported
  auto claim_next = [&]() -> std::optional<std::size_t> {
    while (true) {
      std::optional<std::size_t> oldest;
      {
        std::lock_guard<std::mutex> lock(mutex);
        for (std::size_t i = 0; i < jobs.size(); ++i) {
          if (claimed[i]) continue;
          if (!oldest) oldest = i;
          if (ready(i)) {
            claimed[i] = true;
            return i;
          }
        }
      }
      if (!oldest) return std::nullopt;
      (*prepared[*oldest])->compiled.wait_for(std::chrono::milliseconds(20));  // nothing compiled yet
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < std::min<std::size_t>(workers_.size(), jobs.size()); ++t) {
    threads.emplace_back([&] {
      while (auto i = claim_next()) {
        auto& p = *prepared[*i];
        auto r = p ? finish(jobs[*i], *p) : common::Expected<EvalResult>(p.error());
        std::lock_guard<std::mutex> lock(mutex);
        results[*i] = std::move(r);
        finished.push_back(*i);
        done_cv.notify_one();
      }
    });
  }
  for (std::size_t n_reported = 0; n_reported < jobs.size();) {
    std::vector<std::size_t> batch;
    {
      std::unique_lock<std::mutex> lock(mutex);
      done_cv.wait(lock, [&] { return !finished.empty(); });
      batch.swap(finished);
    }
    for (std::size_t i : batch) {
      ++n_reported;
      if (on_done) on_done(i, *results[i]);
    }
  }
  for (auto& t : threads) t.join();
  std::vector<common::Expected<EvalResult>> out;
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

common::Expected<ChildRecord> Engine::run_task_info(const fs::path& task, const EvalOptions& options,
                                                    const std::string& device) {
  ChildRequest child;
  child.op = ChildOp::TASK_INFO;
  child.options = options;
  child.device = device;
  child.confine_task = task_is_untrusted(task);
  auto reply = ask(*lease_worker(), WorkerRequest{fs::absolute(task).string(), child, std::nullopt});
  if (!reply) return reply.error();
  if (!reply->record) {
    return common::make_error(task.string() + ": the reference process " +
                              (reply->outcome.end.empty() ? std::string("failed") : reply->outcome.end) + ":\n" +
                              reply->outcome.stderr_tail);
  }
  auto record = parse_child_record(*reply->record);
  if (!record) return common::make_error(task.string() + ": " + record.error().message);
  if (record->task_error) return common::make_error(*record->task_error);
  if (!record->result || !record->signature) {
    return common::make_error(task.string() + ": the reference process's record has no result or signature");
  }
  return record;
}

bool Engine::task_is_untrusted(const fs::path& task) const {
  std::error_code ec;
  const fs::path file = fs::weakly_canonical(fs::absolute(task), ec);
  for (const auto& root : untrusted_roots_) {
    const fs::path relative = file.lexically_relative(root);
    if (!relative.empty() && relative != "." && *relative.begin() != "..") return true;
  }
  return false;
}

std::optional<TimingSummary> Engine::time_reference_alone(const fs::path& task, const ChildRequest& evaluation) {
  auto record = run_task_info(task, evaluation.options, evaluation.device);
  if (!record || record->result->ref_runtime.n <= 0) return std::nullopt;
  return record->result->ref_runtime;
}

common::Expected<TaskInfo> Engine::task_info(const fs::path& task) {
  std::error_code ec;
  if (!fs::is_regular_file(task, ec)) return common::make_error(task.string() + ": task file not found");
  auto record = run_task_info(task, config_.options, device_);
  if (!record) return record.error();
  TaskInfo info;
  info.signature = *record->signature;
  const EvalResult& r = *record->result;
  info.ref_runtime = r.ref_runtime;
  info.health = record->health.value_or(nlohmann::json::object());
  info.input_bytes = info.health.value("input_bytes", std::int64_t{0});
  info.problems = info.health.value("problems", std::vector<std::string>{});
  info.device = device_;
  info.device_info = r.device_info.empty() ? device_info_ : r.device_info;
  auto entry = task::manifest_entry_for(task);
  if (!entry) return entry.error();
  info.manifest = *entry;
  if (device_ == "cuda") info.sol_us = roofline(info.manifest, info.device_info).sol_us;
  return info;
}

}  // namespace kernelrl::eval
