// What a kernelbench candidate's process records of every call below Python (eval/kernelbench_serve
// installs it before any candidate code is loaded): the PyTorch operators the call dispatched
// (op_record.hpp) and, on a GPU, the kernels it launched (launch_audit.hpp), with the launch audit
// told which launches an allowed operator made. The record is one JSON object the evaluating child
// judges (eval/runner_candidate.cpp): {"ops": {...}, "launches": {...}}. It lives in the
// candidate's process, so it is a layer of its own, below Python, not the verdict's only ground.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/launch_audit.hpp"
#include "audit/op_record.hpp"
#include "common/expected.hpp"

namespace kernelrl::audit {

class CallRecorder {
 public:
  // The operator recorder, installed once per process. An Error when RecordFunction sees nothing.
  static common::Expected<std::unique_ptr<CallRecorder>> install();

  // On a GPU, once the candidate's libraries are known and before they are loaded: the launch
  // audit, with the kernels `libraries` define as the candidate's own.
  common::Fallible watch_launches(const std::vector<std::filesystem::path>& libraries);

  // Around one call of the candidate (the runner's thread; `stream`: the call's CUDA stream or null).
  void begin_call(void* stream);
  nlohmann::json end_call();

  // What is recorded, for the set-up report: {"op_record": true, "launch_audit": bool}.
  nlohmann::json report() const;

 private:
  CallRecorder() = default;
  OpRecorder* ops_ = nullptr;
  std::unique_ptr<LaunchAudit> launches_;
};

// The record of an operator call's judgement: {"n", "refused", "intact", "refused_inside_allowed"}.
nlohmann::json to_json(const OpCallRecord& ops);

}  // namespace kernelrl::audit
