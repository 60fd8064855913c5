// The kernelbench format rules (python_scan.hpp): a small lexer for Python's literals and comments,
// then word-level checks on what is left.
#include "compile/python_scan.hpp"

#include <array>
#include <cctype>
#include <vector>

namespace kernelrl::compile::detail {
namespace {

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether the quote at `quote` starts a string literal: the letters before it (if any) form a
// valid prefix (r, u, b, f, br, rb, fr, rf in any case) not glued to a longer identifier.
bool string_prefix_ok(std::string_view s, std::size_t quote) {
  std::size_t start = quote;
  while (start > 0 && std::isalpha(static_cast<unsigned char>(s[start - 1]))) --start;
  if (start > 0 && is_ident_char(s[start - 1])) return false;
  std::string prefix;
  for (std::size_t i = start; i < quote; ++i) prefix += static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
  return prefix.empty() || prefix == "r" || prefix == "u" || prefix == "b" || prefix == "f" || prefix == "br" ||
         prefix == "rb" || prefix == "fr" || prefix == "rf";
}

int line_of(std::string_view s, std::size_t pos) {
  int line = 1;
  for (std::size_t i = 0; i < pos && i < s.size(); ++i) line += s[i] == '\n';
  return line;
}

// Offset just after `word` used as a whole identifier at or after `from`, or npos.
std::size_t find_word(std::string_view text, std::string_view word, std::size_t from) {
  for (std::size_t p = text.find(word, from); p != std::string_view::npos; p = text.find(word, p + 1)) {
    const std::size_t end = p + word.size();
    if ((p == 0 || !is_ident_char(text[p - 1])) && (end == text.size() || !is_ident_char(text[end]))) return end;
  }
  return std::string_view::npos;
}

std::size_t skip_blanks(std::string_view s, std::size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\\')) ++i;
  return i;
}

// The last identifier before `pos` (skipping blanks), or "".
std::string_view word_before(std::string_view s, std::size_t pos) {
  std::size_t end = pos;
  while (end > 0 && (s[end - 1] == ' ' || s[end - 1] == '\t')) --end;
  std::size_t start = end;
  while (start > 0 && is_ident_char(s[start - 1])) --start;
  return s.substr(start, end - start);
}

// A `try` statement: the keyword first on its line (after indentation or a `;`), then `:`.
std::optional<PythonRuleBreak> find_try(std::string_view code) {
  for (std::size_t end = find_word(code, "try", 0); end != std::string_view::npos; end = find_word(code, "try", end)) {
    std::size_t start = end - 3, i = start;
    while (i > 0 && (code[i - 1] == ' ' || code[i - 1] == '\t')) --i;
    const bool statement_start = i == 0 || code[i - 1] == '\n' || code[i - 1] == ';' || code[i - 1] == ':';
    std::size_t after = end;
    while (after < code.size() && (code[after] == ' ' || code[after] == '\t')) ++after;
    if (statement_start && after < code.size() && code[after] == ':') {
      return PythonRuleBreak{line_of(code, start),
                             "try/except is not allowed: a fallback around the custom kernel lets PyTorch do the work "
                             "unseen; let errors surface"};
    }
  }
  return std::nullopt;
}

// `class ModelNew(...)` whose bases include the reference class `Model` (or `<module>.Model`).
std::optional<PythonRuleBreak> find_inherited_reference(std::string_view code) {
  for (std::size_t end = find_word(code, "ModelNew", 0); end != std::string_view::npos;
       end = find_word(code, "ModelNew", end)) {
    if (word_before(code, end - 8) != "class") continue;
    std::size_t i = skip_blanks(code, end);
    if (i >= code.size() || code[i] != '(') continue;
    int depth = 0;
    std::size_t base_start = i + 1;
    for (std::size_t j = i; j < code.size(); ++j) {
      const char c = code[j];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') --depth;
      if ((c == ',' && depth == 1) || depth == 0) {
        std::string_view base = code.substr(base_start, j - base_start);
        while (!base.empty() && std::isspace(static_cast<unsigned char>(base.front()))) {
          base.remove_prefix(1);
          ++base_start;
        }
        while (!base.empty() && std::isspace(static_cast<unsigned char>(base.back()))) base.remove_suffix(1);
        const bool is_model = base == "Model" || (base.size() > 6 && base.substr(base.size() - 6) == ".Model");
        if (is_model) {
          return PythonRuleBreak{line_of(code, base_start),
                                 "ModelNew inherits the reference class Model: implement forward with your own "
                                 "kernels instead of running the reference"};
        }
        base_start = j + 1;
        if (depth == 0) break;
      }
    }
  }
  return std::nullopt;
}

// The reference class used: `Model(` (an instance) or `Model.` (its methods), outside its own
// `class Model` definition.
std::optional<PythonRuleBreak> find_reference_use(std::string_view code) {
  for (std::size_t end = find_word(code, "Model", 0); end != std::string_view::npos; end = find_word(code, "Model", end)) {
    const std::size_t start = end - 5;
    if (start > 0 && code[start - 1] == '.') continue;  // some_module.Model: not the task's class
    if (word_before(code, start) == "class") continue;  // its definition (a copy in the candidate)
    std::size_t i = end;
    while (i < code.size() && (code[i] == ' ' || code[i] == '\t')) ++i;
    if (i < code.size() && (code[i] == '(' || code[i] == '.')) {
      return PythonRuleBreak{line_of(code, start),
                             "the reference class Model is used (an instance or its methods): ModelNew must compute "
                             "the output with its own kernels"};
    }
  }
  return std::nullopt;
}

// Work outside the calling thread and the current stream, which the timer's end mark would not
// wait for: the thread and process modules anywhere in the code, and torch's own streams.
std::optional<PythonRuleBreak> find_concurrency(std::string_view code) {
  for (std::string_view module : {"threading", "_thread", "multiprocessing", "concurrent"}) {
    if (auto end = find_word(code, module, 0); end != std::string_view::npos) {
      return PythonRuleBreak{line_of(code, end - module.size()),
                             "`" + std::string(module) +
                                 "` is used: ModelNew runs in the calling thread, with no threads or processes of its "
                                 "own (work left running there escapes the timer)"};
    }
  }
  for (std::string_view name : {"Stream", "stream", "ExternalStream", "set_stream"}) {
    for (std::size_t end = find_word(code, name, 0); end != std::string_view::npos; end = find_word(code, name, end)) {
      const std::size_t start = end - name.size();
      if (start == 0 || code[start - 1] != '.' || word_before(code, start - 1) != "cuda") continue;
      return PythonRuleBreak{line_of(code, start),
                             "torch.cuda." + std::string(name) +
                                 " is used: ModelNew launches on the current stream only (work on a stream of its own "
                                 "escapes the timer)"};
    }
  }
  return std::nullopt;
}

// Outputs that compute later, and code that runs inside torch's own dispatch or module calls: a
// torch.Tensor subclass (lazy outputs that compute when the checker reads them), torch function and
// dispatch modes and overrides (which rewrite the reference's operators), and global module hooks
// (which run around the reference's forward). Honest candidates return plain tensors from their own
// kernels and need none of it.
constexpr std::array<std::string_view, 14> kInterceptionNames{
    "_make_subclass", "__torch_function__", "__torch_dispatch__", "TorchFunctionMode", "TorchDispatchMode",
    "_python_dispatch", "overrides", "register_module_forward_hook", "register_module_forward_pre_hook",
    "register_module_full_backward_hook", "register_module_buffer_registration_hook", "_global_forward_hooks",
    "_global_forward_pre_hooks", "_global_backward_hooks"};

std::optional<PythonRuleBreak> find_interception(std::string_view code) {
  for (std::string_view name : kInterceptionNames) {
    if (auto end = find_word(code, name, 0); end != std::string_view::npos) {
      return PythonRuleBreak{line_of(code, end - name.size()),
                             "`" + std::string(name) +
                                 "` is used: ModelNew returns plain tensors computed by its own kernels; tensor "
                                 "subclasses, dispatch or function modes and global module hooks are not allowed "
                                 "(they compute outside the timed call or change what the reference does)"};
    }
  }
  // class X(torch.Tensor) / class X(Tensor): a tensor subclass.
  for (std::size_t end = find_word(code, "class", 0); end != std::string_view::npos; end = find_word(code, "class", end)) {
    std::size_t open = skip_blanks(code, end);
    while (open < code.size() && is_ident_char(code[open])) ++open;
    open = skip_blanks(code, open);
    if (open >= code.size() || code[open] != '(') continue;
    const std::size_t close = code.find(')', open);
    const std::string_view bases = code.substr(open + 1, close == std::string_view::npos ? close : close - open - 1);
    if (find_word(bases, "Tensor", 0) != std::string_view::npos) {
      return PythonRuleBreak{line_of(code, end - 5),
                             "a torch.Tensor subclass is defined: ModelNew returns plain tensors (a subclass can "
                             "compute its value when the checker reads it, outside the timed call)"};
    }
  }
  return std::nullopt;
}

// KernelBench's backend requirement: the candidate builds an extension of its own (load_inline or
// torch.utils.cpp_extension, outside strings) holding a kernel: a CUDA `__global__` function, or
// C++ `cpp_sources` for the CPU.
std::optional<PythonRuleBreak> find_missing_kernel(std::string_view source, std::string_view code) {
  const bool builds = find_word(code, "load_inline", 0) != std::string_view::npos ||
                      find_word(code, "cpp_extension", 0) != std::string_view::npos;
  const bool kernel = source.find("__global__") != std::string_view::npos ||
                      find_word(code, "cpp_sources", 0) != std::string_view::npos;
  if (builds && kernel) return std::nullopt;
  return PythonRuleBreak{1, builds ? "no kernel: the extension defines no __global__ function (or C++ cpp_sources for "
                                     "the CPU); ModelNew must run a kernel of its own"
                                   : "no extension: the candidate never calls load_inline (torch.utils.cpp_extension); "
                                     "ModelNew must run a kernel of its own, not only PyTorch operators"};
}

// The modules a kernelbench candidate may import: torch and the pure-computation standard library.
constexpr std::array<std::string_view, 10> kAllowedModules{"torch",       "math",    "typing",      "functools",
                                                           "itertools",   "collections", "numbers", "dataclasses",
                                                           "__future__",  "abc"};

// Names that reach the process itself (descriptors, the interpreter's objects, other processes,
// code run from strings or files) by attribute as well as by import (`torch.os` is the os module,
// `tempfile._os` too): refused anywhere outside literals.
constexpr std::array<std::string_view, 46> kSystemNames{
    "os", "sys", "posix", "io", "_io", "_os", "_sys", "_posixsubprocess", "tempfile", "shutil", "pathlib", "ctypes",
    "ctypeslib", "cffi", "socket", "subprocess", "fcntl", "mmap", "gc", "inspect", "importlib", "builtins",
    "__builtins__", "__import__", "pty", "atexit", "faulthandler", "marshal", "pickle", "runpy", "pdb", "signal",
    "hub", "load_library", "get_type_hints", "ForwardRef", "_eval_type", "__subclasses__", "__globals__",
    "__code__", "__closure__", "__dict__", "__getattribute__", "__bases__", "__base__", "__mro__"};

// Built-in functions that open files, run code from strings or reach objects by computed names,
// refused when called as built-ins (`x.eval()`, `torch.compile` are methods and fine).
constexpr std::array<std::string_view, 10> kSystemBuiltins{"open",    "eval",    "exec",    "compile", "globals",
                                                           "vars",    "getattr", "setattr", "delattr", "breakpoint"};

std::string system_reason(std::string_view what) {
  return std::string(what) +
         ": ModelNew computes with torch and its own kernels only (no files, descriptors, processes or the "
         "interpreter's internals: the evaluator's process and its report channel are off limits)";
}

// The top-level module each `import a.b as c, d` / `from a.b import c` statement names, checked
// against kAllowedModules.
std::optional<PythonRuleBreak> find_disallowed_import(std::string_view code) {
  for (std::size_t end = find_word(code, "import", 0); end != std::string_view::npos;
       end = find_word(code, "import", end)) {
    const std::size_t start = end - 6;
    std::size_t line_start = code.rfind('\n', start);
    line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
    std::string_view before = code.substr(line_start, start - line_start);
    if (const auto semi = before.rfind(';'); semi != std::string_view::npos) before.remove_prefix(semi + 1);
    while (!before.empty() && (before.front() == ' ' || before.front() == '\t')) before.remove_prefix(1);
    std::vector<std::string_view> modules;
    if (before.substr(0, 5) == "from " || before.substr(0, 5) == "from\t") {
      std::string_view rest = before.substr(5);
      while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
      modules.push_back(rest.substr(0, rest.find_first_of(" \t")));
    } else if (before.empty()) {
      std::size_t stop = code.find_first_of("\n;", end);
      std::string_view names = code.substr(end, stop == std::string_view::npos ? std::string_view::npos : stop - end);
      for (std::size_t comma = 0; comma != std::string_view::npos;) {
        const std::size_t next = names.find(',', comma);
        std::string_view one = names.substr(comma, next == std::string_view::npos ? next : next - comma);
        while (!one.empty() && (one.front() == ' ' || one.front() == '\t' || one.front() == '(')) one.remove_prefix(1);
        modules.push_back(one.substr(0, one.find_first_of(" \t)")));
        comma = next == std::string_view::npos ? next : next + 1;
      }
    } else {
      continue;  // `import` inside an expression: not a statement
    }
    for (std::string_view module : modules) {
      const std::string_view top = module.substr(0, module.find('.'));
      if (top.empty() || top.front() == '.') {
        return PythonRuleBreak{line_of(code, start), system_reason("a relative import")};
      }
      bool allowed = false;
      for (auto a : kAllowedModules) allowed = allowed || top == a;
      if (!allowed) {
        std::string list;
        for (auto a : kAllowedModules) list += (list.empty() ? "" : ", ") + std::string(a);
        return PythonRuleBreak{line_of(code, start), "module `" + std::string(top) + "` is imported: " +
                                                         "kernelbench candidates may import only " + list};
      }
    }
  }
  return std::nullopt;
}

std::optional<PythonRuleBreak> find_system_access(std::string_view code) {
  if (auto b = find_disallowed_import(code)) return b;
  for (std::string_view name : kSystemNames) {
    if (auto end = find_word(code, name, 0); end != std::string_view::npos) {
      return PythonRuleBreak{line_of(code, end - name.size()), system_reason("`" + std::string(name) + "` is used")};
    }
  }
  for (std::string_view name : kSystemBuiltins) {
    for (std::size_t end = find_word(code, name, 0); end != std::string_view::npos; end = find_word(code, name, end)) {
      const std::size_t start = end - name.size();
      std::size_t before = start;
      while (before > 0 && (code[before - 1] == ' ' || code[before - 1] == '\t')) --before;
      if (before > 0 && code[before - 1] == '.') continue;  // a method or attribute of that name
      if (word_before(code, start) == "def") continue;      // a method of ModelNew's own of that name
      return PythonRuleBreak{line_of(code, start),
                             system_reason("the built-in `" + std::string(name) + "` is used")};
    }
  }
  return std::nullopt;
}

// Code (outside strings and comments) that is not ASCII. Python reads identifiers in their NFKC
// form, so a fullwidth `ｏｓ` is the module `os` to the interpreter and to no scan that compares
// ASCII names; no honest kernel needs such a name.
std::optional<PythonRuleBreak> find_non_ascii_code(std::string_view code) {
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (static_cast<unsigned char>(code[i]) >= 0x80) {
      return PythonRuleBreak{line_of(code, i),
                             "characters outside ASCII in the code (outside strings and comments): Python reads names "
                             "in their NFKC form (a fullwidth `ｏｓ` is `os`); write names in ASCII"};
    }
  }
  return std::nullopt;
}

}  // namespace

std::string blank_python_literals(std::string_view s) {
  std::string out(s);
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '#') {  // comment to the end of the line
      while (i < s.size() && s[i] != '\n') out[i++] = ' ';
      continue;
    }
    if ((c == '\'' || c == '"') && string_prefix_ok(s, i)) {
      const bool triple = i + 2 < s.size() && s[i + 1] == c && s[i + 2] == c;
      const std::size_t open = triple ? 3 : 1;
      std::size_t j = i + open;
      for (; j < s.size(); ++j) {
        if (s[j] == '\\') {  // escapes the next character (in raw strings too, for the lexer)
          if (j + 1 < s.size() && s[j + 1] != '\n') out[j + 1] = ' ';
          out[j] = ' ';
          ++j;
          continue;
        }
        if (!triple && s[j] == '\n') break;  // unterminated: ends with the line
        if (s[j] == c && (!triple || (j + 2 < s.size() && s[j + 1] == c && s[j + 2] == c))) break;
        if (s[j] != '\n') out[j] = ' ';
      }
      i = j >= s.size() ? s.size() : j + (s[j] == '\n' ? 0 : open);
      continue;
    }
    ++i;
  }
  return out;
}

bool has_try_statement(std::string_view source) { return find_try(blank_python_literals(source)).has_value(); }

std::optional<PythonRuleBreak> kernelbench_rule_break(std::string_view source, bool system_access,
                                                      common::RuleSet rules) {
  const std::string code = blank_python_literals(source);
  if (auto b = find_non_ascii_code(code)) return b;
  if (rules != common::RuleSet::OBSERVE) {
    if (auto b = find_try(code)) return b;
  }
  if (auto b = find_inherited_reference(code)) return b;
  if (auto b = find_reference_use(code)) return b;
  if (auto b = find_concurrency(code)) return b;
  if (auto b = find_interception(code)) return b;
  if (common::kernelbench_acceptance(rules)) {
    if (auto b = find_missing_kernel(source, code)) return b;
  }
  return system_access ? find_system_access(code) : std::nullopt;
}

}  // namespace kernelrl::compile::detail
