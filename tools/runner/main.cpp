// kernelrl-runner: the process a native or host candidate's code runs in (docs/security.md, "One
// isolation design"). An evaluating child execs it at the child's own start; it holds nothing of
// the evaluation but the candidate and the tensors it is handed, confines itself before loading the
// candidate, and is linked non-PIE with full RELRO and BIND_NOW (tools/runner/CMakeLists.txt).
//   kernelrl-runner --kind host|native --device cpu|cuda --pages-fd N --parent PID
#include <cstdio>

#include "runner/device_runner.hpp"
#include "runner/host_runner.hpp"
#include "runner/runner_start.hpp"

int main(int argc, char** argv) {
  auto args = kernelrl::runner::parse_runner_args(argc, argv);
  if (!args) {
    std::fprintf(stderr, "%s\n", args.error().message.c_str());
    return 64;
  }
  auto pages = kernelrl::runner::begin_runner(*args);
  if (!pages) {
    std::fprintf(stderr, "kernelrl-runner: %s\n", pages.error().message.c_str());
    return 1;
  }
  if (args->kind == "native" && args->cuda) kernelrl::runner::serve_device_runner(std::move(*pages), args->parent);
  if (args->kind == "host" && !args->cuda) kernelrl::runner::serve_host_runner(std::move(*pages), args->parent);
  std::fprintf(stderr, "kernelrl-runner: --kind %s does not run on --device %s here\n", args->kind.c_str(),
               args->cuda ? "cuda" : "cpu");
  return 64;
}
