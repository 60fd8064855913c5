// KernelBench's warning categories for a kernelbench candidate (its kernel_static_checker.py,
// WARNING_CHECKS, read at 423217d): patterns KernelBench reports without refusing the candidate.
// `--rules kernelbench` puts them in the result record's `warnings`, so a re-check of published
// solutions shows what KernelBench would have flagged; they never change a verdict. Its fourth
// warning category, CUDA streams, is a refusal under both of kernelrl's rule sets (python_scan.hpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernelrl::compile {

// One line per category found, "CATEGORY: what matched", in the order pytorch_wrap (a torch.nn
// compute layer), torch_computation_ops (torch.matmul, torch.relu, ..., torch.nn.functional), and,
// when `fp32` (the precision the candidate is judged at), precision_downgrade (float to half casts).
// Read as KernelBench reads it: the whole text, strings included (CUDA sources live in strings),
// each line cut at its first `#` or `//` (and at 4,096 characters).
std::vector<std::string> kernelbench_warnings(std::string_view source, bool fp32);

}  // namespace kernelrl::compile
