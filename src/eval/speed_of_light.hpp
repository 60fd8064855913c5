// Speed of light: the shortest time a task could take on this GPU, from the manifest's FLOPs and
// minimum bytes and the device's peak FP32 (CUDA-core) throughput and memory bandwidth. Reported
// beside every speedup; kernels on tensor cores (TF32 within the tolerance) can beat the FP32
// bound of matmul-heavy tasks, so a fraction above 1 is possible there.
#pragma once

#include <optional>
#include <string>

#include "task/manifest.hpp"

namespace kernelrl::eval {

struct DevicePeaks {
  std::string model;        // e.g. "H200"
  double fp32_flops = 0;    // per second, dense, CUDA cores
  double bytes_per_s = 0;   // memory bandwidth
  double tensor_flops = 0;  // per second, dense 16-bit tensor cores: the most any kernel can reach
};

// Published peaks of known data-centre GPUs, matched on the device name ("NVIDIA H200" -> H200);
// nullopt for an unknown device.
std::optional<DevicePeaks> peaks_for_device(const std::string& device_name);

struct SpeedOfLight {
  double us = 0;      // max(flops / fp32_flops, min_bytes / bytes_per_s)
  std::string bound;  // "memory" or "compute"
};

SpeedOfLight speed_of_light(const task::ManifestEntry& entry, const DevicePeaks& peaks);

// The roofline no honest kernel can beat: the task's FLOPs at the tensor-core peak or its minimum
// bytes at the memory peak, whichever takes longer, with `margin` for data-sheet and timer error
// (a runtime under `margin` x the bound is implausible). Inputs are flushed from L2 before every
// timed call, so the memory bound holds.
double plausible_floor_us(const task::ManifestEntry& entry, const DevicePeaks& peaks, double margin = 0.8);

}  // namespace kernelrl::eval
