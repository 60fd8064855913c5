// kernelbench candidates must compute with their own kernels: a ModelNew whose forward calls
// PyTorch for the work (all of it, or the expensive part, or through at:: calls inside its
// extension) is not what the reward is for. The audit records every PyTorch operator dispatched
// while a candidate call runs (a TorchDispatchMode, so operators reached from C++ extension code
// count too) and names those outside what a kernel-writing candidate needs from torch: allocating
// (empty, zeros, full, ...), views and reshapes, copies and dtype/device moves, fills, reading a
// scalar. Everything else (aten::_softmax, aten::mm, aten::add, ...) is refused.
// In-process, so a candidate determined to look for the mode can see it; it runs on every
// correctness trial. Python objects: interpreter thread only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "common/expected.hpp"

namespace kernelrl::eval {

// Runs a candidate call and names the refused operators it dispatched ("aten::_softmax"), each once,
// in the order first seen, at most 8: here (TorchOpAudit) or in the candidate's own process, whose
// runner audits the call it makes (eval/kernelbench_runner.hpp).
class OpAudit {
 public:
  virtual ~OpAudit() = default;
  virtual std::vector<std::string> refused_ops_during(const std::function<void()>& call) const = 0;
};

class TorchOpAudit : public OpAudit {
 public:
  // Fails when this torch has no TorchDispatchMode (torch < 1.13).
  static common::Expected<TorchOpAudit> create();

  std::vector<std::string> refused_ops_during(const std::function<void()>& call) const override;

 private:
  TorchOpAudit(pybind11::object mode_class, pybind11::set allowed)
      : mode_class_(std::move(mode_class)), allowed_(std::move(allowed)) {}
  pybind11::object mode_class_;
  pybind11::set allowed_;  // allowed_ops() as schema names, built once
};

// Whether an operator (schema name without overload, "aten::view") is one a kernelbench candidate
// may call.
bool torch_op_allowed(const std::string& schema_name);

}  // namespace kernelrl::eval
