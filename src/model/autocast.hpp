// Mixed precision for the policy model: query the autocast state of a device type, and a scope
// that turns autocast on (weights stay float32, matmuls run in bfloat16) and clears its cast cache
// on exit, as Python's torch.autocast context manager does. Works with libtorch 1.13 and 2.x.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace kernelrl::model {

// Whether autocast is on for `device_type` (CPU or CUDA) on this thread.
bool autocast_enabled(c10::DeviceType device_type);

// The dtype autocast casts to on `device_type` (meaningful when autocast_enabled).
c10::ScalarType autocast_dtype(c10::DeviceType device_type);

// Enables autocast for `device_type` with `dtype` on this thread until destroyed; restores the
// previous state and, when the outermost scope ends, drops the cached casts of the weights (they
// are stale after an optimizer step). Not copyable; use one per forward+backward.
class AutocastScope {
 public:
  explicit AutocastScope(c10::DeviceType device_type, c10::ScalarType dtype = c10::kBFloat16);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_type_;
  bool was_enabled_;
  c10::ScalarType previous_dtype_;
};

}  // namespace kernelrl::model
