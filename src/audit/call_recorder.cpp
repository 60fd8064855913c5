#include "audit/call_recorder.hpp"

#include "audit/own_kernels.hpp"

namespace kernelrl::audit {

common::Expected<std::unique_ptr<CallRecorder>> CallRecorder::install() {
  auto ops = OpRecorder::install();
  if (!ops) return ops.error();
  std::unique_ptr<CallRecorder> recorder(new CallRecorder());
  recorder->ops_ = *ops;
  return recorder;
}

common::Fallible CallRecorder::watch_launches(const std::vector<std::filesystem::path>& libraries) {
  auto own = own_kernel_names(libraries);
  if (!own) return own.error();
  auto audit = std::make_unique<LaunchAudit>();
  if (auto installed = audit->install(std::move(*own), [] { return OpRecorder::inside_allowed_op(); }); !installed) {
    return installed;
  }
  launches_ = std::move(audit);
  return common::Ok{};
}

void CallRecorder::begin_call(void* stream) {
  if (launches_) launches_->begin_call(stream);
  if (ops_) ops_->begin_call();
}

nlohmann::json CallRecorder::end_call() {
  nlohmann::json record = nlohmann::json::object();
  if (ops_) record["ops"] = to_json(ops_->end_call());
  if (launches_) record["launches"] = to_json(launches_->end_call());
  return record;
}

nlohmann::json CallRecorder::report() const {
  return {{"op_record", ops_ != nullptr}, {"launch_audit", launches_ != nullptr}};
}

nlohmann::json to_json(const OpCallRecord& ops) {
  return {{"n", ops.n_ops},
          {"refused", ops.refused},
          {"n_refused", ops.n_refused},
          {"refused_inside_allowed", ops.refused_inside_allowed},
          {"intact", ops.recording_intact}};
}

}  // namespace kernelrl::audit
