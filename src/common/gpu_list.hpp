// Which GPUs a command spreads over (`--gpus`): `kernelrl worker --redis` runs one evaluation slot
// per GPU, `kernelrl eval --batch` one engine per GPU. Each entry is a CUDA_VISIBLE_DEVICES value,
// set for that GPU's processes only, so each sees its GPU as device 0.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::common {

// "all": the entries of CUDA_VISIBLE_DEVICES when it is set (a scheduler's allocation: Slurm,
// Kubernetes), else one per GPU the driver lists (/proc/driver/nvidia/gpus); empty when there is
// none. "0,1,...": those, each a GPU index or a GPU-/MIG- UUID, none twice (two users of one GPU
// would time each other's kernels). An Error names the bad entry.
Expected<std::vector<std::string>> resolve_gpus(const std::string& spec);

// "a,b,c" split at the commas, empty parts dropped.
std::vector<std::string> split_commas(const std::string& s);

}  // namespace kernelrl::common
