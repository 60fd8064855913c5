# expect: REJECTED under the default rules ("strict"); OK under the "kernelbench" rule set.
# Breaks one thing: an otherwise honest solution of tasks/level2/076_linear_divide_tanh_scale.py that
# leaves the expensive part, the GEMM, to torch.matmul and fuses only the cheap epilogue
# (bias, divide, tanh, scale) into its own kernel: "fusing only the cheap ops" (DESIGN.md). The
# strict operator audit sees aten::mm; KernelBench's own acceptance only checks the output.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

epilogue_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void bias_divide_tanh_scale_kernel(float* __restrict__ y, const float* __restrict__ bias,
                                              int64_t rows, int64_t cols, float divisor, float scale) {
    const int64_t n = rows * cols;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const float v = (y[i] + bias[i % cols]) / divisor;
        y[i] = tanhf(v) * scale;
    }
}

// In place on the GEMM result (a fresh tensor this module owns).
torch::Tensor bias_divide_tanh_scale_(torch::Tensor y, torch::Tensor bias, double divisor, double scale) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.dim() == 2, "contiguous 2-D CUDA tensor expected");
    TORCH_CHECK(bias.numel() == y.size(1), "bias must have out_features elements");
    auto b = bias.contiguous();
    bias_divide_tanh_scale_kernel<<<1024, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        y.data_ptr<float>(), b.data_ptr<float>(), y.size(0), y.size(1), (float)divisor, (float)scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

epilogue_ext = load_inline(
    name="kbcorpus_adv_torch_matmul_epilogue",
    cpp_sources="torch::Tensor bias_divide_tanh_scale_(torch::Tensor y, torch::Tensor bias, double divisor, double scale);",
    cuda_sources=epilogue_source,
    functions=["bias_divide_tanh_scale_"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, divisor, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor
        self.scale_factor = scale_factor

    def forward(self, x):
        y = torch.matmul(x, self.linear.weight.t())  # the one broken thing: PyTorch does the GEMM
        return epilogue_ext.bias_divide_tanh_scale_(y, self.linear.bias, self.divisor, self.scale_factor)
