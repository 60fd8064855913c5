#include "runner/device_runner.hpp"

#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "runner/device_state.hpp"
#include "runner/protocol.hpp"
#include "sandbox/candidate_confinement.hpp"

namespace kernelrl::runner {

namespace {

int usage(const char* why) {
  std::fprintf(stderr, "kernelrl-gpu-runner: %s\nusage: kernelrl-gpu-runner PAGES_FD PAGES_BYTES PARENT_PID ARTIFACT\n"
                       "(started by an evaluating child, not by hand)\n", why);
  return 64;
}

}  // namespace

int run_device_runner(int argc, char** argv) {
  if (argc != 5) return usage("expected 4 arguments");
  const int fd = std::atoi(argv[1]);
  const auto bytes = static_cast<std::size_t>(std::strtoull(argv[2], nullptr, 10));
  const auto parent = static_cast<pid_t>(std::atol(argv[3]));
  const std::string artifact = argv[4];
  auto pages = attach_pages(fd, bytes, parent);
  if (!pages) return usage(pages.error().message.c_str());
  auto* h = reinterpret_cast<Header*>(pages->data());
  DeviceState state;
  void* arena = nullptr;
  if (const std::string failed = set_up_device(h, state, arena); !failed.empty()) fail_set_up(h, failed);
  answer_set_up(h, sandbox::confine_candidate_process().dump());
  RunnerHooks hooks;
  hooks.data = static_cast<std::byte*>(arena);
  hooks.data_bytes = h->arena_bytes;
  hooks.device = DLDevice{kDLCUDA, h->device};
  hooks.stream = state.stream;
  hooks.flush = flush_device;
  hooks.finish = finish_device;
  hooks.state = &state;
  serve(h, parent, artifact, hooks);
}

}  // namespace kernelrl::runner
