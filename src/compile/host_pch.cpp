// The host-compile wrapper behind compile/host_pch.hpp: recognise nvcc's host compile, split its
// input at the candidate's first line, build or reuse the precompiled header part, compile the
// rest against it; everything else, and every failure, runs the real compiler unchanged.
#include "compile/host_pch.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "common/fs.hpp"
#include "common/hash.hpp"
#include "common/subprocess.hpp"

namespace kernelrl::compile::host_pch {

namespace {

namespace fs = std::filesystem;

constexpr const char* kPrefixName = "prefix.h";
constexpr const char* kPchName = "prefix.h.gch";
constexpr const char* kFailedName = "failed";  // the header part did not compile on its own: never retried

// Options of gcc whose value is the next argument (only those nvcc's host commands use matter).
bool takes_separate_value(std::string_view a) {
  static constexpr std::string_view kOptions[] = {"-x",       "-I",        "-isystem", "-include", "-imacros", "-iquote",
                                                   "-idirafter", "-D",       "-U",       "-MF",      "-MT",      "-MQ",
                                                   "-Xlinker", "-Xassembler"};
  return std::find(std::begin(kOptions), std::end(kOptions), a) != std::end(kOptions);
}

// `# 12 "name"` (optionally followed by gcc's flag digits) starting at `line`.
bool is_marker_to(std::string_view line, std::string_view name) {
  if (line.size() < 3 || line[0] != '#' || line[1] != ' ' || !std::isdigit(static_cast<unsigned char>(line[2]))) return false;
  std::size_t i = 2;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
  if (line.substr(i, 2) != " \"") return false;
  i += 2;
  if (line.substr(i, name.size()) != name) return false;
  i += name.size();
  return i < line.size() && line[i] == '"' && (i + 1 == line.size() || line[i + 1] == ' ');
}

[[noreturn]] void exec_real(const std::string& real, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(real.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(real.c_str(), argv.data());
  std::fprintf(stderr, "kernelrl host-cc: cannot run the host compiler '%s' ($%s)\n", real.c_str(), kRealCompilerEnv);
  std::_Exit(127);
}

// The real compiler with its output captured, in our process group (the engine's time limit
// kills it with us; it has none of its own here).
common::Expected<common::RunResult> run_real(const std::string& real, const std::vector<std::string>& args) {
  std::vector<std::string> argv{real};
  argv.insert(argv.end(), args.begin(), args.end());
  common::RunLimits limits;
  limits.own_process_group = false;
  limits.wall_time = std::chrono::hours(24);
  return common::run_process(argv, {}, {}, limits);
}

bool entry_holds(const fs::path& entry, std::string_view prefix) {
  std::error_code ec;
  if (!fs::is_regular_file(entry / kPchName, ec)) return false;
  auto stored = common::read_file(entry / kPrefixName, 256ull << 20);
  return stored && *stored == prefix;  // the full text, not just the hash, decides
}

// Builds the entry for `prefix` unless another process is building it (then false: this compile
// goes without). False also when the header part does not compile on its own.
bool build_entry(const std::string& real, std::vector<std::string> flags, const fs::path& dir, const fs::path& entry,
                 std::string_view prefix) {
  const std::string lock_path = entry.string() + ".lock";
  const int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0) return false;
  if (::flock(lock, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock);
    return false;
  }
  bool ready = entry_holds(entry, prefix);
  std::error_code ec;
  if (!ready && !fs::exists(entry / kFailedName, ec)) {
    if (auto tmp = common::make_temp_dir(dir, "build-")) {
      bool ok = static_cast<bool>(common::write_file_atomic(*tmp / kPrefixName, std::string(prefix)));
      if (ok) {
        for (std::size_t i = 0; i + 1 < flags.size(); ++i) {
          if (flags[i] == "-x") flags[i + 1] = "c++-header";
        }
        flags.push_back((*tmp / kPrefixName).string());
        flags.push_back("-o");
        flags.push_back((*tmp / kPchName).string());
        const auto built = run_real(real, flags);
        if (!built || !built->ok()) {
          ::unlink((*tmp / kPchName).c_str());
          (void)common::write_file_atomic(*tmp / kFailedName, built ? built->output : built.error().message);
        }
      }
      if (!ok || ::rename(tmp->c_str(), entry.c_str()) != 0) (void)common::remove_tree(*tmp);
      ready = entry_holds(entry, prefix);
      evict_least_recent(dir, kMaxEntries);
    }
  }
  ::flock(lock, LOCK_UN);
  ::close(lock);
  return ready;
}

}  // namespace

void evict_least_recent(const fs::path& dir, std::size_t max_entries) {
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory(ec) && name.rfind("build-", 0) != 0) entries.emplace_back(e.last_write_time(ec), e.path());
  }
  if (entries.size() <= max_entries) return;
  std::sort(entries.begin(), entries.end());
  for (std::size_t i = 0; i + max_entries < entries.size(); ++i) {
    (void)common::remove_tree(entries[i].second);
    ::unlink((entries[i].second.string() + ".lock").c_str());
  }
}

std::optional<std::size_t> header_prefix_length(std::string_view text) {
  if (text.substr(0, 5) != "# 1 \"") return std::nullopt;
  const std::size_t name_end = text.find('"', 5);
  const std::size_t first_eol = text.find('\n');
  if (name_end == std::string_view::npos || first_eol == std::string_view::npos || name_end > first_eol) return std::nullopt;
  const std::string_view name = text.substr(5, name_end - 5);
  for (std::size_t pos = first_eol + 1; pos < text.size();) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    if (text[pos] == '#' && is_marker_to(text.substr(pos, eol - pos), name)) {
      return pos >= kMinPrefixBytes ? std::optional<std::size_t>(pos) : std::nullopt;
    }
    pos = eol + 1;
  }
  return std::nullopt;
}

std::optional<HostCompile> find_host_compile(const std::vector<std::string>& args) {
  bool compile_only = false;
  std::optional<std::size_t> input, output;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-c") {
      compile_only = true;
    } else if (a == "-o" && i + 1 < args.size()) {
      output = ++i;
    } else if (takes_separate_value(a)) {
      ++i;
    } else if (!a.empty() && a[0] != '-' && a.ends_with(".cudafe1.cpp")) {
      if (input) return std::nullopt;  // one translation unit only
      input = i;
    }
  }
  if (!compile_only || !input || !output) return std::nullopt;
  return HostCompile{*input, *output};
}

int run_wrapper(const std::vector<std::string>& args) {
  const char* real_env = std::getenv(kRealCompilerEnv);
  if (real_env == nullptr || *real_env == '\0') {
    std::fprintf(stderr, "kernelrl host-cc: $%s is not set (the real host compiler this wrapper stands for)\n",
                 kRealCompilerEnv);
    return 2;
  }
  const std::string real = real_env;
  std::error_code ec;
  if (fs::equivalent(real, "/proc/self/exe", ec)) {
    std::fprintf(stderr, "kernelrl host-cc: $%s names this wrapper itself ('%s')\n", kRealCompilerEnv, real.c_str());
    return 2;
  }
  const char* dir_env = std::getenv(kPchDirEnv);
  const auto plan = dir_env && *dir_env ? find_host_compile(args) : std::nullopt;
  if (!plan) exec_real(real, args);

  const fs::path input = args[plan->input_index];
  auto text = common::read_file(input, 256ull << 20);
  const auto prefix_bytes = text ? header_prefix_length(*text) : std::nullopt;
  if (!prefix_bytes) exec_real(real, args);
  // The header part without the first line, which names the source by its (per-build) path.
  const std::size_t first_line_bytes = text->find('\n') + 1;
  const std::string_view prefix = std::string_view(*text).substr(first_line_bytes, *prefix_bytes - first_line_bytes);

  std::vector<std::string> flags;  // the command without its input and output: what the header is built with
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i == plan->input_index || i == plan->output_index || (i + 1 == plan->output_index && args[i] == "-o")) continue;
    flags.push_back(args[i]);
  }
  std::string key_text = real;
  for (const auto& f : flags) key_text += '\0' + f;
  key_text += '\0';
  key_text += prefix;
  const fs::path dir = dir_env;
  fs::create_directories(dir, ec);
  const fs::path entry = dir / common::hash_hex(key_text);
  if (!entry_holds(entry, prefix) && !build_entry(real, flags, dir, entry, prefix)) exec_real(real, args);

  // The rest beside the input, so its own quoted includes (nvcc's stub file) still resolve.
  const fs::path rest = input.string() + ".after_pch.cpp";
  const std::string rest_text = text->substr(0, first_line_bytes) + "#include \"" + (entry / kPrefixName).string() +
                                "\"\n" + text->substr(*prefix_bytes);
  if (!common::write_file_atomic(rest, rest_text)) exec_real(real, args);
  std::vector<std::string> with_pch = args;
  with_pch[plan->input_index] = rest.string();
  const auto compiled = run_real(real, with_pch);
  ::unlink(rest.c_str());
  if (!compiled || !compiled->ok()) exec_real(real, args);  // gcc's own diagnostics, on the original text
  std::fputs(compiled->output.c_str(), stderr);
  ::utimensat(AT_FDCWD, entry.c_str(), nullptr, 0);  // recently used: kept by evict()
  return 0;
}

}  // namespace kernelrl::compile::host_pch
