// KernelBench's warning categories (compile/kernelbench_warnings.hpp) on candidates written the
// way its own examples and LLM answers are: a clean load_inline kernel has none; PyTorch compute
// layers, high-level operators and float-to-half casts are named, comments are not read, and a
// longer operator name is not the operator.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compile/kernelbench_warnings.hpp"

namespace kernelrl::compile {
namespace {

using Warnings = std::vector<std::string>;

// KernelBench's own example answer, in shape: an elementwise add built with load_inline.
const char* kElementwiseAdd = R"PY(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
__global__ void add_kernel(const float* a, const float* b, float* out, int size) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < size) out[idx] = a[idx] + b[idx];  // one element per thread
}
torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b) {
    auto out = torch::zeros_like(a);
    add_kernel<<<(a.numel() + 255) / 256, 256>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), a.numel());
    return out;
}
"""
add = load_inline(name="add", cpp_sources="torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=source, functions=["add_cuda"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(1))  # a Parameter is structure, not compute

    def forward(self, a, b):
        # torch.relu(a) would be a warning if it were code
        return add.add_cuda(a, b)
)PY";

TEST(KernelbenchWarnings, AKernelOfItsOwnHasNone) {
  EXPECT_EQ(kernelbench_warnings(kElementwiseAdd, true), Warnings{});
}

TEST(KernelbenchWarnings, PyTorchDoingTheWorkIsNamed) {
  EXPECT_EQ(kernelbench_warnings("y = torch.relu(ext.bias_add(x, b))\n", true),
            Warnings{"torch_computation_ops: torch.relu"});
  EXPECT_EQ(kernelbench_warnings("return F.gelu(ext.conv(x))\n", true), Warnings{"torch_computation_ops: F.gelu"});
  EXPECT_EQ(kernelbench_warnings("y = torch.nn.functional.softmax(x, dim=1)\n", true),
            (Warnings{"pytorch_wrap: torch.nn.functional", "torch_computation_ops: torch.nn.functional.softmax"}));
  EXPECT_EQ(kernelbench_warnings("self.fc = torch.nn.Linear(16, 16)\n", true), Warnings{"pytorch_wrap: torch.nn.Linear"});
  // Another name that begins with an operator's is not that operator; in-place ops are not listed.
  EXPECT_EQ(kernelbench_warnings("x = torch.relu_(x)\ny = torch.mmx\n", true), Warnings{});
  EXPECT_EQ(kernelbench_warnings("return torch.matmul\n", true), Warnings{"torch_computation_ops: torch.matmul"});
}

TEST(KernelbenchWarnings, AFloatToHalfCastIsNamedAtFp32Only) {
  const std::string cuda = "source = \"\"\"\n__global__ void k(const float* x, __half* y) { y[0] = __float2half(x[0]); }\n\"\"\"\n";
  EXPECT_EQ(kernelbench_warnings(cuda, true), Warnings{"precision_downgrade: __float2half("});
  EXPECT_EQ(kernelbench_warnings(cuda, false), Warnings{});
  EXPECT_EQ(kernelbench_warnings("return ext.run(x.half()).float()\n", true), Warnings{"precision_downgrade: .half("});
  EXPECT_EQ(kernelbench_warnings("y = x.to(dtype=torch.float16)\n", true),
            Warnings{"precision_downgrade: .to(dtype=torch.float16"});
}

TEST(KernelbenchWarnings, AVeryLongLineIsReadOnlyInPart) {
  const std::string line = "x = " + std::string(200000, 'a') + " + torch.relu(y)\n";
  EXPECT_EQ(kernelbench_warnings(line + "z = torch.tanh(x)\n", true), Warnings{"torch_computation_ops: torch.tanh"});
}

}  // namespace
}  // namespace kernelrl::compile
