#include "rollout/prompt.hpp"

#include <cctype>
#include <cstdio>
#include <filesystem>

#include "common/fs.hpp"

namespace kernelrl::rollout {

namespace fs = std::filesystem;

std::string fill(std::string text, const std::vector<std::pair<std::string, std::string>>& values) {
  // One pass over the template: inserted values are never scanned again, so a task or an attempt
  // that contains "{code}" stays as it is.
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    bool replaced = false;
    if (text[i] == '{') {
      for (const auto& [name, value] : values) {
        if (text.compare(i + 1, name.size(), name) == 0 && i + 1 + name.size() < text.size() &&
            text[i + 1 + name.size()] == '}') {
          out += value;
          i += name.size() + 2;
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

common::Expected<PromptTemplates> load_templates(const fs::path& dir, common::Format format, const fs::path& example_file) {
  PromptTemplates t;
  const std::string format_name(common::to_string(format));
  std::string example_summary;
  const std::pair<std::string*, std::string> files[] = {
      {&t.system, "system.txt"},       {&t.base, "base.txt"},
      {&t.format_rules, "format_" + format_name + ".txt"},
      {&t.one_shot, "one_shot.txt"},   {&t.attempt, "attempt.txt"},
      {&t.previous_attempts, "previous_attempts.txt"}, {&t.restart, "restart.txt"},
      {&example_summary, "example_summary_" + format_name + ".txt"}};
  for (const auto& [target, name] : files) {
    auto text = common::read_file(dir / name, 1u << 20);
    if (!text) return common::make_error("prompt template: " + text.error().message);
    *target = *text;
  }
  auto example = common::read_file(example_file, 1u << 20);
  if (!example) return common::make_error("one-shot example: " + example.error().message);
  t.language = format == common::Format::KERNELBENCH ? "python" : format == common::Format::HOST ? "cpp" : "cuda";
  t.example = "```" + t.language + "\n" + *example + "```\n" + example_summary;
  return t;
}

namespace {

bool path_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' || c == '_' || c == '-' || c == '+' || c == '~';
}
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `text` with every mention of the candidate's file (its name, with any folders before it) as
// "candidate" + its extension: rollout, env and service write the file under names of their own
// (t0_turn2.cpp, candidate.cpp, candidate_0.cpp), and the policy's feedback must not depend on
// which of them evaluated it.
std::string with_candidate_named(std::string text, const std::string& candidate_path) {
  const std::filesystem::path path(candidate_path);
  const std::string name = path.filename().string();
  const std::string canonical = "candidate" + path.extension().string();
  if (name.empty()) return text;
  for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at)) {
    const std::size_t end = at + name.size();
    const bool ends = end == text.size() || !name_char(text[end]);
    const bool starts = at == 0 || !path_char(text[at - 1]) || text[at - 1] == '/';
    if (!ends || !starts) {
      at = end;
      continue;
    }
    std::size_t begin = at;
    while (begin > 0 && path_char(text[begin - 1])) --begin;
    text.replace(begin, end - begin, canonical);
    at = begin + canonical.size();
  }
  return text;
}

std::string outcome_line(const eval::EvalResult& r) {
  switch (r.status) {
    case common::Status::OK: {
      if (!(r.runtime_us > 0 && r.ref_runtime_us > 0)) {  // timing off, or a reward that does not run the code
        return r.error.message.empty() ? "correct (not timed)" : "correct (not timed): " + r.error.message;
      }
      char buf[160];
      std::snprintf(buf, sizeof buf, "correct, speedup %.2fx over PyTorch eager (%.1f us vs %.1f us)", r.speedup,
                    r.runtime_us, r.ref_runtime_us);
      return buf;
    }
    case common::Status::COMPILE_ERROR:
      return "failed to compile: " + r.error.message + (r.error.compile_log.empty() ? "" : "\n" + r.error.compile_log);
    case common::Status::FORMAT_ERROR:
    case common::Status::REJECTED:
      return "rejected: " + r.error.message;
    case common::Status::RUNTIME_ERROR:
      return "runtime error: " + r.error.message;
    case common::Status::TIMEOUT:
      return "timed out: " + r.error.message;
    case common::Status::WRONG_OUTPUT:
      return "incorrect: " + r.error.message;
  }
  return "unknown outcome";
}

}  // namespace

std::string feedback_line(const std::optional<std::string>& parse_error, const eval::EvalResult& r) {
  if (parse_error) return "failed to parse: " + *parse_error;
  return with_candidate_named(outcome_line(r), r.candidate);
}

std::string no_response_line(const std::string& policy_error) { return "no response: " + policy_error; }

BuiltPrompt build_prompt(const PromptTemplates& t, const std::string& task_source, const std::vector<Attempt>& previous,
                         const PromptConfig& config, const policy::TokenBudget* tokens) {
  const std::string rules = fill(t.format_rules, {{"gpu", config.gpu}});  // the GPU is the native and kernelbench formats'
  std::string head = fill(t.base, {{"gpu", config.gpu}, {"format_rules", rules}, {"task_source", task_source}});
  head += "\n" + fill(t.one_shot, {{"example", t.example}});  // every turn (issue 41)
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < previous.size(); ++i) {
    shown.push_back(fill(t.attempt, {{"number", std::to_string(i + 1)},
                                     {"language", t.language},
                                     {"code", previous[i].code},
                                     {"summary", previous[i].summary.empty() ? "(none)" : previous[i].summary},
                                     {"feedback", previous[i].feedback}}));
  }
  auto n_chars = [&](std::size_t first) {
    std::size_t n = t.system.size() + head.size() + t.restart.size() + t.previous_attempts.size();
    for (std::size_t i = first; i < shown.size(); ++i) n += shown[i].size() + 1;
    return n;
  };
  auto messages = [&](std::size_t first) {  // the attempts from `first` on
    std::string user = head;
    if (first < shown.size()) {
      user += "\n" + t.previous_attempts;
      for (std::size_t i = first; i < shown.size(); ++i) user += "\n" + shown[i];
      user += "\n" + t.restart;
    }
    return std::vector<Message>{{"system", t.system}, {"user", user}};
  };

  BuiltPrompt p;
  std::size_t first = 0;  // oldest attempts go first
  while (first < shown.size() && config.max_chars > 0 && n_chars(first) > config.max_chars) ++first;
  p.messages = messages(first);
  if (tokens) {
    p.n_tokens = tokens->count(p.messages);
    while (*p.n_tokens > tokens->max_tokens && first < shown.size()) {
      p.messages = messages(++first);
      p.n_tokens = tokens->count(p.messages);
    }
    p.fits = *p.n_tokens <= tokens->max_tokens;
  }
  p.n_attempts_dropped = static_cast<int>(first);
  p.n_attempts_shown = static_cast<int>(shown.size() - first);
  return p;
}

}  // namespace kernelrl::rollout
