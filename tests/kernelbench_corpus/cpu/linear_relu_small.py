# Honest CPU kernelbench candidate for tests/kernelbench_corpus/tasks/cpu_linear_relu_small.py:
# Linear + ReLU in one C++ loop nest over the layer's own parameters.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

linear_relu_cpp = r"""
#include <torch/extension.h>

torch::Tensor linear_relu_cpu(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(!x.is_cuda() && !weight.is_cuda() && !bias.is_cuda(), "CPU tensors expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32, "float32 expected");
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1), "x (B, in), weight (out, in)");
    TORCH_CHECK(bias.numel() == weight.size(0), "bias must have out_features elements");
    x = x.contiguous();
    weight = weight.contiguous();
    bias = bias.contiguous();
    const int64_t B = x.size(0), IN = x.size(1), OUT = weight.size(0);
    auto y = torch::empty({B, OUT}, x.options());
    const float* xp = x.data_ptr<float>();
    const float* wp = weight.data_ptr<float>();
    const float* bp = bias.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    for (int64_t i = 0; i < B; ++i) {
        for (int64_t o = 0; o < OUT; ++o) {
            float acc = 0.0f;
            for (int64_t k = 0; k < IN; ++k) acc += xp[i * IN + k] * wp[o * IN + k];
            acc += bp[o];
            yp[i * OUT + o] = acc > 0.0f ? acc : 0.0f;
        }
    }
    return y;
}
"""

linear_relu = load_inline(
    name="kbcorpus_cpu_linear_relu",
    cpp_sources=linear_relu_cpp,
    functions=["linear_relu_cpu"],
    extra_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return linear_relu.linear_relu_cpu(x, self.linear.weight, self.linear.bias)
