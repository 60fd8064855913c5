# KernelBench-format CPU candidate for examples/vector_add: load_inline with cpp_sources only.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

vector_add_cpp_source = r"""
#include <torch/extension.h>

torch::Tensor vector_add_cpu(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(!a.is_cuda() && !b.is_cuda(), "inputs must be CPU tensors");
    TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32,
                "inputs must be float32");
    TORCH_CHECK(a.sizes() == b.sizes(), "shape mismatch");
    a = a.contiguous();
    b = b.contiguous();
    auto c = torch::empty_like(a);
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* pc = c.data_ptr<float>();
    const int64_t n = a.numel();
    for (int64_t i = 0; i < n; ++i) pc[i] = pa[i] + pb[i];
    return c;
}
"""

vector_add = load_inline(
    name="kernelrl_example_vector_add_cpu",
    cpp_sources=vector_add_cpp_source,
    functions=["vector_add_cpu"],
    extra_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.vector_add = vector_add

    def forward(self, A, B):
        return self.vector_add.vector_add_cpu(A, B)
