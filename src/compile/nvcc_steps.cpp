// nvcc's steps run side by side (compile/nvcc_steps.hpp): parse --dryrun, write the script, and
// remember the parse per command line so nvcc's driver runs once, not once per candidate.
#include "compile/nvcc_steps.hpp"

#include <cctype>
#include <map>
#include <mutex>
#include <optional>
#include <regex>

#include "common/subprocess.hpp"
#include "compile/diagnostics.hpp"

namespace kernelrl::compile::nvcc_steps {

namespace {

namespace fs = std::filesystem;

// Stands for the scratch folder in remembered steps.
constexpr std::string_view kScratchToken = "\x01scratch\x01";

std::string program_of(std::string_view command) {
  std::string first(command.substr(0, command.find(' ')));
  std::erase(first, '"');
  const std::size_t slash = first.rfind('/');
  return slash == std::string::npos ? first : first.substr(slash + 1);
}

bool has_word(std::string_view command, std::string_view word) {
  for (std::size_t pos = command.find(word); pos != std::string_view::npos; pos = command.find(word, pos + 1)) {
    const bool starts = pos == 0 || command[pos - 1] == ' ';
    const std::size_t end = pos + word.size();
    if (starts && (end == command.size() || command[end] == ' ')) return true;
  }
  return false;
}

std::optional<std::string> quoted_value_after(std::string_view command, std::string_view option) {
  const std::size_t at = command.find(std::string(option) + " \"");
  if (at == std::string_view::npos) return std::nullopt;
  const std::size_t begin = at + option.size() + 2;
  const std::size_t end = command.find('"', begin);
  if (end == std::string_view::npos) return std::nullopt;
  return std::string(command.substr(begin, end - begin));
}

std::string single_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Paths that go into the script unquoted-safe: no quotes, spaces, $ or backslashes.
bool plain_path(const std::string& p) {
  for (unsigned char c : p) {
    if (!(std::isalnum(c) || c == '/' || c == '_' || c == '-' || c == '.' || c == '+')) return false;
  }
  return !p.empty();
}

}  // namespace

common::Expected<Steps> parse_dryrun(std::string_view output) {
  Steps s;
  std::vector<std::string> commands;
  static const std::regex kAssignment(R"(^([A-Za-z_][A-Za-z0-9_]*)=(.*)$)");
  std::vector<std::pair<std::string, std::string>> variables;
  for (std::size_t pos = 0; pos < output.size();) {
    std::size_t eol = output.find('\n', pos);
    if (eol == std::string_view::npos) eol = output.size();
    std::string_view line = output.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.substr(0, 3) != "#$ ") continue;
    std::string text(line.substr(3));
    while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.pop_back();
    std::smatch m;
    if (commands.empty() && std::regex_match(text, m, kAssignment)) {
      variables.emplace_back(m[1], m[2]);
    } else {
      commands.push_back(text);
    }
  }
  // One command per role, whatever order nvcc printed them in (with --threads its threads print
  // as they run); nvcc's removal of the fatbin is left out, the script cleans up itself.
  for (const auto& c : commands) {
    const std::string prog = program_of(c);
    std::string* slot = nullptr;
    if (prog == "rm") continue;
    if (prog == "cudafe++") slot = &s.cudafe;
    else if (prog == "cicc") slot = &s.cicc;
    else if (prog == "ptxas") slot = &s.ptxas;
    else if (prog == "fatbinary") slot = &s.fatbinary;
    else if (has_word(c, "-E")) slot = c.find("-D__CUDA_ARCH__=") != std::string::npos ? &s.device_preprocess : &s.host_preprocess;
    else if (has_word(c, "-c")) slot = &s.host_compile;
    if (c.find(" > ") != std::string::npos || c.find(" 2>") != std::string::npos) {
      return common::make_error("nvcc --dryrun step '" + prog + "' redirects its output (nvcc --threads?)");
    }
    if (slot == nullptr) return common::make_error("nvcc --dryrun lists a step kernelrl does not know: '" + prog + "'");
    if (!slot->empty()) return common::make_error("nvcc --dryrun lists '" + prog + "' twice (several sources or architectures)");
    *slot = c;
  }
  for (const std::string* step : {&s.host_preprocess, &s.cudafe, &s.device_preprocess, &s.cicc, &s.ptxas, &s.fatbinary, &s.host_compile}) {
    if (step->empty()) return common::make_error("nvcc --dryrun lists no " + std::string(step == &s.host_compile ? "host compile" : "front-end") + " step of the expected seven");
  }
  const auto cudafe_id = quoted_value_after(s.cudafe, "--module_id_file_name");
  const auto cicc_id = quoted_value_after(s.cicc, "--module_id_file_name");
  if (!cudafe_id || !cicc_id || *cudafe_id != *cicc_id || !has_word(s.cudafe, "--gen_module_id_file")) {
    return common::make_error("cudafe++ and cicc do not share one generated module id file");
  }
  s.module_id_file = *cudafe_id;
  s.cudafe = detail::replace_all(s.cudafe, " --gen_module_id_file", "");  // cudafe++ reads the id we write, as cicc does

  std::string all_commands;
  for (const auto& c : commands) all_commands += c + '\n';
  for (const auto& [name, value] : variables) {
    const bool referenced = all_commands.find("$" + name) != std::string::npos || all_commands.find("${" + name) != std::string::npos;
    if (value.find('"') != std::string::npos) {
      if (referenced) return common::make_error("nvcc's variable " + name + " holds quoted words");
      continue;  // INCLUDES and kin: already expanded into the commands
    }
    s.exports.push_back("export " + name + "=" + single_quoted(value));
  }
  return s;
}

std::string parallel_script(const Steps& s, const std::string& module_id, const fs::path& work_dir) {
  const std::string log = (work_dir / "nvcc-device-chain.log").string();
  const fs::path id_file = s.module_id_file;
  const std::string id_name = id_file.filename().string();
  const std::string temp_glob = (id_file.parent_path() / (id_name.substr(0, id_name.find('-') + 1) + "*")).string();
  std::string t;
  for (const auto& e : s.exports) t += e + '\n';
  t += "trap 'rm -f " + log + " " + temp_glob + "' EXIT\n";  // also when a step fails: errors are cached
  t += "printf '%s' " + single_quoted(module_id) + " > " + single_quoted(s.module_id_file) + " || exit 1\n";
  t += "( " + s.device_preprocess + " && " + s.cicc + " && " + s.ptxas + " && " + s.fatbinary + " ) > " + log + " 2>&1 &\n";
  t += "device=$!\n";
  // A failed host chain waits for the device chain instead of killing it: killing the subshell
  // leaves its running step (cicc, ptxas) writing temporaries after the trap has removed them.
  t += "if ! { " + s.host_preprocess + " && " + s.cudafe + "; }; then wait $device; exit 1; fi\n";
  t += "if ! wait $device; then cat " + log + "; exit 1; fi\n";
  t += "cat " + log + "\n";
  t += s.host_compile + "\n";
  return t;
}

common::Expected<std::string> script_for(const std::vector<std::string>& nvcc_argv, const std::vector<std::string>& env,
                                         const fs::path& scratch, const std::string& module_id) {
  const std::string dir = scratch.string();
  if (!plain_path(dir)) return common::make_error("the scratch folder '" + dir + "' has characters a script would need quoted");
  std::vector<std::string> plain;  // nvcc's own --threads is what the script replaces
  for (std::size_t i = 0; i < nvcc_argv.size(); ++i) {
    if (nvcc_argv[i] == "--threads" || nvcc_argv[i] == "-t") {
      ++i;
    } else {
      plain.push_back(nvcc_argv[i]);
    }
  }
  std::string key;
  for (const auto& a : plain) key += a + '\0';
  key += '\n';
  for (const auto& e : env) key += e + '\0';
  key = detail::replace_all(key, dir, kScratchToken);

  static std::mutex mutex;
  static std::map<std::string, common::Expected<Steps>> remembered;  // per command line, scratch abstracted
  std::optional<common::Expected<Steps>> steps;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = remembered.find(key); it != remembered.end()) steps = it->second;
  }
  if (!steps) {
    std::vector<std::string> argv{"env"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), plain.begin(), plain.end());
    argv.push_back("--dryrun");
    auto run = common::run_process(argv, scratch);
    if (!run || !run->ok()) {
      return common::make_error("nvcc --dryrun failed: " + (run ? run->output.substr(0, 500) : run.error().message));
    }
    std::string text = run->output;
    text = detail::replace_all(text, dir, kScratchToken);
    steps = parse_dryrun(text);
    if (steps->ok() && fs::path((*steps)->module_id_file).parent_path().string() != kScratchToken) {
      steps = common::Expected<Steps>(common::make_error("nvcc's temporary files are not in the scratch folder (TMPDIR)"));
    }
    std::lock_guard<std::mutex> lock(mutex);
    remembered.emplace(key, *steps);
  }
  if (!steps->ok()) return common::make_error(steps->error().message);
  std::string script = parallel_script(**steps, module_id, kScratchToken);
  script = detail::replace_all(script, kScratchToken, dir);
  return script;
}

}  // namespace kernelrl::compile::nvcc_steps
