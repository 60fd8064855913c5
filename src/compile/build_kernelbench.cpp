// Kernelbench builds: run the candidate file once (not as __main__) under the task's Python so its
// load_inline calls compile their extensions into <entry>/extensions. torch bakes the build
// folder's path into build.ninja and rebuilds when the path changes, so this entry is built in
// place rather than in a scratch folder: an flock on <entry>/.lock serialises builders (and is
// released if a builder dies), and result.json, written last, marks the entry finished.
//
// The candidate's module-level Python code runs here, outside the evaluation's sandbox but under
// tools/confine (reads, writes, system calls), with the compiler's time limit. The runner must load the artifact with the same TORCH_EXTENSIONS_DIR
// (<artifact>/extensions), TORCH_CUDA_ARCH_LIST and CUDA toolkit (torch finds it the same way in
// both processes: $CUDA_HOME, else nvcc on PATH), or torch rebuilds.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "common/fs.hpp"
#include "compile/build.hpp"
#include "compile/cache.hpp"
#include "compile/diagnostics.hpp"
#include "compile/extension_calls.hpp"
#include "compile/import_check.hpp"
#include "compile/system_call_check.hpp"
#include "kernelrl/build_config.hpp"
#include "sandbox/confinement.hpp"

namespace kernelrl::compile::detail {

namespace {

namespace fs = std::filesystem;
using common::Status;

constexpr const char* kPrebuildScript = "import runpy,sys; runpy.run_path(sys.argv[1], run_name='kernelrl_prebuild')";
constexpr std::size_t kTracebackLines = 12;

// Holds an exclusive flock on a file for its lifetime.
class EntryLock {
 public:
  explicit EntryLock(const fs::path& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {}
  ~EntryLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  EntryLock(const EntryLock&) = delete;
  EntryLock& operator=(const EntryLock&) = delete;

  // Polls until the lock is held or `deadline` passes.
  bool acquire(std::chrono::steady_clock::time_point deadline) {
    if (fd_ < 0) return false;
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }

 private:
  int fd_;
};

CompileResult failure(Status status, const std::string& message) {
  CompileResult r;
  r.status = status;
  r.message = message;
  r.log_excerpt = message;
  return r;
}

// The exception line of the last traceback, prefixed with the candidate's line that raised it
// ("candidate.py:12: NameError: name 'x' is not defined"), or empty if there is no traceback.
std::string exception_message(const std::string& output, const std::string& display_name) {
  std::size_t tb = output.rfind("Traceback (most recent call last):");
  if (tb == std::string::npos) return "";
  std::string frame_marker = "File \"" + display_name + "\", line ";
  std::string where;
  for (std::size_t p = output.find(frame_marker, tb); p != std::string::npos; p = output.find(frame_marker, p + 1)) {
    std::size_t b = p + frame_marker.size(), e = b;
    while (e < output.size() && std::isdigit(static_cast<unsigned char>(output[e]))) ++e;
    where = display_name + ":" + output.substr(b, e - b) + ": ";
  }
  std::size_t pos = output.find('\n', tb);
  while (pos != std::string::npos && pos + 1 < output.size()) {
    std::size_t eol = output.find('\n', pos + 1);
    std::string line = output.substr(pos + 1, eol == std::string::npos ? std::string::npos : eol - pos - 1);
    if (!line.empty() && line[0] != ' ' && line[0] != '\t') return where + line.substr(0, 400);
    pos = eol;
  }
  return "";
}

// The end of `text`, at most max_chars, starting on a line boundary.
std::string last_chars(const std::string& text, std::size_t max_chars) {
  if (text.size() <= max_chars) return text;
  std::size_t from = text.find('\n', text.size() - max_chars + 4);
  return "...\n" + (from == std::string::npos ? text.substr(text.size() - max_chars + 4) : text.substr(from + 1));
}

// Failures that say the environment is broken, not the candidate: never cached.
bool environment_failure(const std::string& output) {
  return output.find("No module named 'torch'") != std::string::npos ||
         output.find("CUDA_HOME environment variable is not set") != std::string::npos;
}

// Why an extension the build produced may not be loaded (compile/import_check.hpp), naming it, or
// nullopt; an unreadable library is refused too. A forbidden import alone is not the candidate's
// doing: toolchains that link the C++ runtime statically bring its system calls along, so the
// candidate is refused only when its own code refers to one.
std::optional<std::string> refused_extension(const fs::path& extensions, const std::string& display_name,
                                             bool system_access) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(extensions, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->path().extension() != ".so") continue;
    const std::string prefix = display_name + ": extension " + it->path().filename().string() + ": ";
    auto imports = imported_symbols(it->path());
    if (!imports) return display_name + ": cannot read the built extension: " + imports.error().message;
    if (forbidden_extension_import(*imports, system_access)) {
      auto own = candidate_forbidden_reference(it->path(), system_access);
      if (!own) return display_name + ": cannot check the built extension: " + own.error().message;
      if (*own) return prefix + **own;
    }
    if (!system_access) continue;
    auto own_calls = raw_system_call(it->path());
    if (!own_calls) return display_name + ": cannot check the built extension: " + own_calls.error().message;
    if (*own_calls) return prefix + **own_calls;
  }
  return std::nullopt;
}

}  // namespace

CompileResult build_kernelbench(const BuildRequest& req) {
  const auto start = std::chrono::steady_clock::now();
  const Toolchain& tc = req.toolchain;
  const std::string arch_list = dotted_arch(req.options.cuda_arch);
  if (arch_list.empty()) {
    return failure(Status::COMPILE_ERROR,
                   "invalid cuda_arch '" + req.options.cuda_arch + "': expected digits such as 90 or 100a");
  }
  if (tc.python.empty()) return failure(Status::COMPILE_ERROR, "no Python interpreter configured for kernelbench candidates");
  if (tc.confine.empty()) {  // the prebuild runs the candidate's module-level code: never unconfined
    return failure(Status::COMPILE_ERROR, "kernelrl-confine not found (" + std::string(build::confine_tool) +
                                              "): build the project's tools/confine");
  }
  std::error_code ec;
  fs::create_directories(req.entry, ec);
  if (ec) return failure(Status::COMPILE_ERROR, req.entry.string() + ": cannot create: " + ec.message());

  EntryLock lock(req.entry / ".lock");
  // A concurrent builder of the same entry finishes within its own limit; allow for that, then ours.
  auto deadline = start + 2 * req.options.time_limit + std::chrono::seconds(10);
  if (!lock.acquire(deadline)) {
    return failure(Status::TIMEOUT, "compile exceeded " + std::to_string(req.options.time_limit.count() / 1000) +
                                        " s waiting for a concurrent build of the same candidate");
  }
  if (req.options.use_cache) {
    if (auto done = read_entry(req.entry, req.key_text, req.display_name)) {  // built while we waited
      done->cache_hit = true;
      return *done;
    }
  }
  // Start clean: a killed build leaves torch's own lock file behind, on which load_inline waits forever.
  fs::remove(req.entry / "result.json", ec);
  const fs::path extensions = req.entry / "extensions";
  (void)common::remove_tree(extensions);
  fs::create_directories(extensions, ec);
  const fs::path src = req.entry / source_file_name(req.options.format);
  if (auto s = common::write_file_atomic(src, req.source); !s) {
    return failure(Status::COMPILE_ERROR, "cannot write the source: " + s.error().message);
  }

  const fs::path scratch = req.entry / "tmp";  // the compilers' temporaries (TMPDIR)
  fs::create_directories(scratch, ec);
  std::string nvcc_append;  // added to every nvcc command torch runs, after the user's own
  if (const char* user = std::getenv("NVCC_APPEND_FLAGS")) nvcc_append = user;
  for (const char* define : kNvtxOffDefines) nvcc_append += (nvcc_append.empty() ? "" : " ") + std::string(define);
  std::vector<std::string> env{"TORCH_EXTENSIONS_DIR=" + extensions.string(), "TORCH_CUDA_ARCH_LIST=" + arch_list,
                               "MAX_JOBS=4", "PYTHONDONTWRITEBYTECODE=1", "TMPDIR=" + scratch.string(),
                               "NVCC_APPEND_FLAGS=" + nvcc_append};
  // The module's code runs here (load_inline must start compilers, so no process filter): writes
  // only to its entry, CUDA's JIT cache (~/.nv) and single device files (/dev/null, the GPU's), never
  // to /dev as a folder or /dev/shm, which other processes share; no network; reads only the
  // toolchain, the interpreter's paths (torch) and its entry, so a compiler it starts cannot include
  // a host file either (tools/confine).
  std::vector<std::string> writable{req.entry.string()};
  if (const char* home = std::getenv("HOME")) {
    if (fs::is_directory(std::string(home) + "/.nv", ec)) writable.push_back(std::string(home) + "/.nv");
  }
  for (const auto& device : sandbox::device_files_for_candidates(true).writable) writable.push_back(device);
  const std::vector<std::string> argv = confined(tc, req.options, true, writable, {tc.python, "-c", kPrebuildScript, src.string()});
  common::RunLimits limits;
  limits.wall_time = req.options.time_limit;
  // No RLIMIT_AS: torch and the CUDA libraries reserve far more address space than they use.
  limits.file_size_bytes = 1ull << 30;
  limits.nice = kCompilerNice;
  auto run = common::run_process(with_env(env, argv), req.entry, {}, limits);
  (void)common::remove_tree(scratch);
  if (run) run->output = clean_paths(run->output, src, req.entry, req.display_name);

  BuildOutcome outcome = interpret_run(run, "the kernelbench build (" + tc.python + ")", req.options, req.display_name);
  CompileResult& result = outcome.result;
  if (run && result.status == Status::COMPILE_ERROR && run->term_signal == 0) {
    // The traceback's last lines, after the compiler errors of a failed load_inline if it has any.
    std::string tail = traceback_tail(run->output, kTracebackLines);
    if (first_error(run->output, "", req.display_name).empty()) {
      std::string exception = exception_message(run->output, req.display_name);
      if (!exception.empty()) result.message = exception;
      result.log_excerpt = last_chars(tail, 2000);
    } else {
      result.log_excerpt = trim_diagnostics(run->output, "", req.display_name, 5, 1200) + "\n" + last_chars(tail, 800);
    }
    if (environment_failure(run->output)) outcome.cacheable = false;
  }
  if (result.status == Status::OK) {
    if (auto refused = refused_extension(extensions, req.display_name, req.options.system_access_check)) {
      result.status = Status::REJECTED;
      result.message = *refused;
      result.log_excerpt = *refused;
    }
  }
  if (result.status == Status::OK) result.artifact = req.entry;
  result.t_compile_ms = ms_since(start);
  std::string full_log = run ? run->output : std::string();
  if (!outcome.cacheable) {
    (void)common::write_file_atomic(req.entry / "compile.log", full_log);
    return result;
  }
  (void)write_entry_files(req.entry, req.key_text, result, req.display_name, full_log);
  return result;
}

}  // namespace kernelrl::compile::detail

namespace kernelrl::compile {

std::string torch_cuda_arch_list(const std::string& cuda_arch) { return detail::dotted_arch(cuda_arch); }

}  // namespace kernelrl::compile
