// What a compiler run means for a candidate: the status, the one-line message and the trimmed log,
// plus the small helpers every build shares (environment, architecture spelling, timing).
#include <csignal>
#include <cstdio>
#include <string_view>

#include "compile/build.hpp"
#include "compile/diagnostics.hpp"

namespace kernelrl::compile::detail {

namespace {

using common::Status;

std::string seconds_text(std::chrono::milliseconds ms) {
  char buf[32];
  if (ms.count() % 1000 == 0) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(ms.count() / 1000));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(ms.count()) / 1000.0);
  }
  return buf;
}

std::string gib_text(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g GiB", static_cast<double>(bytes) / static_cast<double>(1ull << 30));
  return buf;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGKILL: return "SIGKILL";
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGXCPU: return "SIGXCPU";
    case SIGTERM: return "SIGTERM";
    case SIGILL: return "SIGILL";
    case SIGSYS: return "SIGSYS";
    default: return "signal " + std::to_string(sig);
  }
}

// Signs, in the output of a failed run, that it failed for lack of memory rather than because of
// the code: such a failure depends on the limit and is not cached.
bool ran_out_of_memory(const std::string& output) {
  for (std::string_view sign : {"virtual memory exhausted", "out of memory", "internal compiler error: Killed",
                                "std::bad_alloc", "Cannot allocate memory"}) {
    if (output.find(sign) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

BuildOutcome interpret_run(const common::Expected<common::RunResult>& run, const std::string& tool,
                            const CompileOptions& options, const std::string& display_name) {
  BuildOutcome out;
  CompileResult& r = out.result;
  if (!run) {
    r.status = Status::COMPILE_ERROR;
    r.message = "cannot run " + tool + ": " + run.error().message;
    r.log_excerpt = r.message;
    return out;
  }
  const common::RunResult& rr = *run;
  r.log_excerpt = trim_diagnostics(rr.output, "", display_name);
  if (rr.timed_out) {
    r.status = Status::TIMEOUT;
    r.message = "compile exceeded " + seconds_text(options.time_limit) + " s";
    return out;
  }
  if (rr.term_signal != 0) {
    r.status = Status::COMPILE_ERROR;
    r.message = tool + " was killed by " + signal_name(rr.term_signal);
    if (rr.term_signal == SIGXFSZ) {
      r.message += " (it wrote a file over the size limit)";
    } else if (rr.term_signal == SIGSYS) {  // tools/confine's filter: the candidate's module-level code
      r.status = Status::REJECTED;
      r.message += " (a system call the build's sandbox forbids: network sockets, tracing, mounts, namespaces)";
    } else if (rr.term_signal == SIGKILL || rr.term_signal == SIGSEGV || rr.term_signal == SIGABRT) {
      r.message += " (possibly the " + gib_text(options.memory_limit_bytes) + " memory limit)";
    }
    return out;
  }
  if (rr.exit_code != 0) {
    r.status = Status::COMPILE_ERROR;
    r.message = first_error(rr.output, "", display_name);
    bool oom = ran_out_of_memory(rr.output);
    if (oom) r.message = tool + " ran out of memory (limit " + gib_text(options.memory_limit_bytes) + ")";
    if (r.message.empty()) r.message = tool + " exited with status " + std::to_string(rr.exit_code);
    out.cacheable = !oom;
    return out;
  }
  r.status = Status::OK;
  out.cacheable = true;
  return out;
}

std::string clean_paths(const std::string& output, const std::filesystem::path& source,
                        const std::filesystem::path& scratch_dir, const std::string& display_name) {
  std::string text = replace_all(output, source.string(), display_name);
  return replace_all(std::move(text), scratch_dir.string() + "/", "");
}

std::vector<std::string> with_env(const std::vector<std::string>& env, const std::vector<std::string>& argv) {
  std::vector<std::string> full{"env"};
  full.insert(full.end(), env.begin(), env.end());
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

std::vector<std::string> confined(const Toolchain& tc, const CompileOptions& options, bool python,
                                  const std::vector<std::string>& writable, const std::vector<std::string>& argv) {
  std::vector<std::string> full{tc.confine};
  const std::vector<std::string>& roots = python ? tc.python_read_roots : tc.read_roots;
  for (const auto& root : roots) full.insert(full.end(), {"--read", root});
  for (const auto& root : options.extra_read_roots) full.insert(full.end(), {"--read", root});
  for (const auto& root : writable) full.insert(full.end(), {"--write", root});
  full.push_back("--");
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

std::string dotted_arch(const std::string& arch) {
  std::size_t n_digits = 0;
  while (n_digits < arch.size() && arch[n_digits] >= '0' && arch[n_digits] <= '9') ++n_digits;
  std::string suffix = arch.substr(n_digits);
  if (n_digits < 2 || n_digits > 3 || (!suffix.empty() && suffix != "a" && suffix != "f")) return "";
  return arch.substr(0, n_digits - 1) + "." + arch.substr(n_digits - 1, 1) + suffix;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kernelrl::compile::detail
