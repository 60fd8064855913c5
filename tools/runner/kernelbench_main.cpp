// kernelrl-kernelbench-runner: the process a kernelbench candidate's code runs in (docs/security.md,
// "One isolation design"), with its own interpreter and torch. An evaluating child execs it at the
// child's own start; it holds nothing of the evaluation but the candidate and the tensors it is
// handed, confines itself before importing the candidate, and is linked non-PIE with full RELRO and
// BIND_NOW (tools/runner/CMakeLists.txt).
//   kernelrl-kernelbench-runner --kind kernelbench --device cpu|cuda --pages-fd N --parent PID
#include <cstdio>

#include "eval/kernelbench_serve.hpp"
#include "runner/runner_start.hpp"

int main(int argc, char** argv) {
  auto args = kernelrl::runner::parse_runner_args(argc, argv);
  if (!args || args->kind != "kernelbench") {
    std::fprintf(stderr, "%s\n", args ? "kernelrl-kernelbench-runner: --kind must be kernelbench" : args.error().message.c_str());
    return 64;
  }
  auto pages = kernelrl::runner::begin_runner(*args);
  if (!pages) {
    std::fprintf(stderr, "kernelrl-kernelbench-runner: %s\n", pages.error().message.c_str());
    return 1;
  }
  kernelrl::eval::serve_kernelbench_runner(std::move(*pages), args->parent, args->cuda);
}
