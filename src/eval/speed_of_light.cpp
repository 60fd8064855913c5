#include "eval/speed_of_light.hpp"

#include <array>

namespace kernelrl::eval {

std::optional<DevicePeaks> peaks_for_device(const std::string& device_name) {
  // Vendor data sheets (SXM parts unless the name says PCIe). Order matters: first match wins.
  static const std::array<std::pair<const char*, DevicePeaks>, 7> known{{
      {"H200", {"H200", 67e12, 4.8e12, 989e12}},
      {"H100 PCIe", {"H100 PCIe", 51e12, 2.0e12, 756e12}},
      {"H100", {"H100", 67e12, 3.35e12, 989e12}},
      {"A100", {"A100", 19.5e12, 2.039e12, 312e12}},
      {"L40S", {"L40S", 91.6e12, 0.864e12, 362e12}},
      {"RTX 4090", {"RTX 4090", 82.6e12, 1.008e12, 165e12}},
      {"B200", {"B200", 80e12, 8.0e12, 2250e12}},
  }};
  for (const auto& [key, peaks] : known) {
    if (device_name.find(key) != std::string::npos) return peaks;
  }
  return std::nullopt;
}

namespace {

// The roofline at a given compute peak: the slower of the task's FLOPs and its minimum bytes.
SpeedOfLight roofline_at(const task::ManifestEntry& entry, double flops_per_s, double bytes_per_s) {
  const double compute_us = flops_per_s > 0 ? entry.flops / flops_per_s * 1e6 : 0;
  const double memory_us = bytes_per_s > 0 ? entry.min_bytes / bytes_per_s * 1e6 : 0;
  return compute_us > memory_us ? SpeedOfLight{compute_us, "compute"} : SpeedOfLight{memory_us, "memory"};
}

}  // namespace

SpeedOfLight speed_of_light(const task::ManifestEntry& entry, const DevicePeaks& peaks) {
  return roofline_at(entry, peaks.fp32_flops, peaks.bytes_per_s);
}

double plausible_floor_us(const task::ManifestEntry& entry, const DevicePeaks& peaks, double margin) {
  return margin * roofline_at(entry, peaks.tensor_flops, peaks.bytes_per_s).us;
}

}  // namespace kernelrl::eval
