// Autocast state through the API of the libtorch at hand: per-device functions on 2.4 and later,
// the CUDA/CPU-specific ones before.
#include "model/autocast.hpp"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#define KERNELRL_TORCH_AUTOCAST_PER_DEVICE \
  (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))

namespace kernelrl::model {
namespace {

void set_enabled(c10::DeviceType device_type, bool enabled) {
#if KERNELRL_TORCH_AUTOCAST_PER_DEVICE
  at::autocast::set_autocast_enabled(device_type, enabled);
#else
  if (device_type == c10::DeviceType::CUDA) {
    at::autocast::set_enabled(enabled);
  } else {
    at::autocast::set_cpu_enabled(enabled);
  }
#endif
}

void set_dtype(c10::DeviceType device_type, c10::ScalarType dtype) {
#if KERNELRL_TORCH_AUTOCAST_PER_DEVICE
  at::autocast::set_autocast_dtype(device_type, dtype);
#else
  if (device_type == c10::DeviceType::CUDA) {
    at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    at::autocast::set_autocast_cpu_dtype(dtype);
  }
#endif
}

}  // namespace

bool autocast_enabled(c10::DeviceType device_type) {
#if KERNELRL_TORCH_AUTOCAST_PER_DEVICE
  return at::autocast::is_autocast_enabled(device_type);
#else
  return device_type == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

c10::ScalarType autocast_dtype(c10::DeviceType device_type) {
#if KERNELRL_TORCH_AUTOCAST_PER_DEVICE
  return at::autocast::get_autocast_dtype(device_type);
#else
  return device_type == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                              : at::autocast::get_autocast_cpu_dtype();
#endif
}

AutocastScope::AutocastScope(c10::DeviceType device_type, c10::ScalarType dtype)
    : device_type_(device_type), was_enabled_(autocast_enabled(device_type)),
      previous_dtype_(autocast_dtype(device_type)) {
  set_enabled(device_type_, true);
  set_dtype(device_type_, dtype);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (at::autocast::decrement_nesting() == 0) {
    at::autocast::clear_cache();
  }
  set_enabled(device_type_, was_enabled_);
  set_dtype(device_type_, previous_dtype_);
}

}  // namespace kernelrl::model
