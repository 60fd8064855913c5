#include "runner/host_runner.hpp"

#include <string>

#include <nlohmann/json.hpp>

#include "runner/confine.hpp"
#include "runner/protocol.hpp"

namespace kernelrl::runner {

void serve_host_runner(sandbox::SharedPages pages, pid_t parent) {
  nlohmann::json report = confine_files_at_start(false);
  auto* h = reinterpret_cast<Header*>(pages.data());
  const nlohmann::json start = nlohmann::json::parse(wait_for_start(h, parent), nullptr, false);
  if (!start.is_object() || !start.contains("artifact") || !start["artifact"].is_string() ||
      !start.contains("pages_bytes") || !start["pages_bytes"].is_number_unsigned()) {
    fail_set_up(h, "START: expected {\"artifact\": PATH, \"pages_bytes\": N}");
  }
  const std::string artifact = start["artifact"].get<std::string>();
  const auto pages_bytes = start["pages_bytes"].get<std::size_t>();
  if (pages_bytes < kDataOffset) fail_set_up(h, "START: pages_bytes is smaller than the protocol's header");
  // The child extended the memory file for the call's tensors before START.
  if (auto grown = pages.grow(pages_bytes); !grown) fail_set_up(h, grown.error().message);
  h = reinterpret_cast<Header*>(pages.data());
  report.update(confine_calls(true));
  answer_set_up(h, report.dump());
  RunnerHooks hooks;
  hooks.data = pages.data() + kDataOffset;
  hooks.data_bytes = pages_bytes - kDataOffset;
  serve(h, parent, artifact, hooks);
}

}  // namespace kernelrl::runner
