// The vocabulary every subsystem shares: how an evaluation ended and which candidate format it was.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kernelrl::common {

// What happened to a candidate. Data, never an exception.
enum class Status {
  OK,             // compiled, ran, every output correct (timed unless timing was off)
  FORMAT_ERROR,   // not a valid candidate file: empty, binary, too large, no entry point
  COMPILE_ERROR,  // the compiler rejected it (excerpt in the result)
  RUNTIME_ERROR,  // crashed, aborted, returned non-zero, CUDA error, raised
  TIMEOUT,        // a phase ran past its wall-time limit
  WRONG_OUTPUT,   // ran, but an output (or an input it must not touch) is wrong
  REJECTED,       // broke a rule of the evaluation (forbidden header, call or behaviour)
};

// Candidate formats (DESIGN.md): native CUDA C++, host C++ for the CPU, KernelBench Python.
enum class Format { NATIVE, HOST, KERNELBENCH };

// Which rules judge a kernelbench candidate (docs/security.md, "Rule sets"). STRICT, the default
// for RL: the candidate's own kernels do all the work (no PyTorch operators in its calls beyond
// allocating, viewing, copying and filling). KERNELBENCH: KernelBench's own acceptance, for
// re-checking published solutions: PyTorch operators may do part of the work, but a kernel of the
// candidate's own must be there. OBSERVE, for `kernelrl audit`: KernelBench's acceptance without
// its try/except refusal, so a solution with a fallback runs and its record says what each call ran
// (isolation.candidate_process.calls): a solution is measured, never rewarded, under it. All three
// keep every correctness, timing and isolation defense.
enum class RuleSet { STRICT, KERNELBENCH, OBSERVE };

// KERNELBENCH and OBSERVE: judged at KernelBench's tolerances, PyTorch operators allowed, a kernel
// of the candidate's own required.
inline bool kernelbench_acceptance(RuleSet r) { return r != RuleSet::STRICT; }

std::string_view to_string(Status s);
std::string_view to_string(Format f);  // "native", "host", "kernelbench"
std::string_view to_string(RuleSet r);  // "strict", "kernelbench", "observe"
std::optional<Status> parse_status(std::string_view s);
std::optional<Format> parse_format(std::string_view s);
std::optional<RuleSet> parse_rule_set(std::string_view s);

// The format a file's extension suggests (.cu native, .cpp/.cc host, .py kernelbench).
std::optional<Format> format_from_extension(std::string_view path);

}  // namespace kernelrl::common
