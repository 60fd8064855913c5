// Static format rules for kernelbench candidates (Python), the ones published kernel-RL work uses
// against reward hacking: no try/except (a fallback path around the custom kernel) and no use of
// the task's reference class (inheriting it, instantiating it, calling its methods); no tensor
// subclasses, dispatch/function modes or global module hooks; and, like
// native candidates, no threads, processes or CUDA streams of their own, and no way to the process
// itself: imports only of torch and the pure-computation standard library (math, typing, ...), no
// `os`/`sys`/`ctypes`/`gc`/... even as attributes (`torch.os`), no built-in open/eval/exec/getattr
// and no dunder routes to the interpreter's objects (`__subclasses__`, `__globals__`, ...). They read
// the code outside string literals and comments, so CUDA sources inside load_inline strings never
// trip them. Private to the compile subsystem.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/status.hpp"

namespace kernelrl::compile::detail {

// `source` with every comment and the contents of every string literal (all quote and prefix
// forms, triple-quoted too) replaced by spaces; quotes and newlines are kept, so offsets and line
// numbers match the original.
std::string blank_python_literals(std::string_view source);

struct PythonRuleBreak {
  int line = 0;        // 1-based line of the offending code
  std::string reason;  // what a model can read and fix
};

// The first rule a kernelbench candidate breaks, or nullopt. Every rule set: no use of the
// reference class, no threads/processes/streams, no tensor subclasses, dispatch or function modes
// or global module hooks; no try but under OBSERVE (which records what each call ran instead).
// KERNELBENCH and OBSERVE also ask for a kernel of the candidate's own (a __global__
// function or cpp_sources built by load_inline), since PyTorch operators may then do part of the
// work (STRICT's operator audit refuses them at run time). `system_access`: the rules on reaching
// the process (imports, os/sys/..., open/eval/getattr, dunders) too; false only to test the sandbox
// behind them.
std::optional<PythonRuleBreak> kernelbench_rule_break(std::string_view source, bool system_access = true,
                                                      common::RuleSet rules = common::RuleSet::STRICT);

// Whether the code has a try statement (outside strings and comments): a fallback, as the rules read it.
bool has_try_statement(std::string_view source);

}  // namespace kernelrl::compile::detail
