# Published-style solution for tasks/level2/004_conv2d_1x1_multiplier_tanh_sum.py: the 1x1 Conv2d in
# PyTorch, then one thread per (batch, pixel) runs multiplier * -> tanh -> sum over the 512 channels
# (double accumulator). Expected: kernelbench OK, strict REJECTED (aten convolution).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

reduce_kernel_source = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__global__ void mul_tanh_sum_channels_kernel(const float* __restrict__ x, const float* __restrict__ mult,
                                             float* __restrict__ y, int C, int64_t HW, int64_t positions) {
    const int64_t pos = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (pos >= positions) return;
    const int64_t b = pos / HW, p = pos % HW;
    const float* xp = x + b * C * HW + p;
    double s = 0.0;
    for (int c = 0; c < C; ++c) s += (double)tanhf(xp[c * HW] * mult[c]);
    y[pos] = (float)s;
}

void mul_tanh_sum_channels_launch(const float* x, const float* mult, float* y, int64_t B, int C, int64_t HW,
                                  cudaStream_t stream) {
    const int64_t positions = B * HW;
    if (positions == 0) return;
    mul_tanh_sum_channels_kernel<<<(unsigned)((positions + 127) / 128), 128, 0, stream>>>(x, mult, y, C, HW, positions);
}
"""

reduce_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void mul_tanh_sum_channels_launch(const float* x, const float* mult, float* y, int64_t B, int C, int64_t HW,
                                  cudaStream_t stream);

torch::Tensor mul_tanh_sum(torch::Tensor x, torch::Tensor mult) {
    TORCH_CHECK(x.dim() == 4 && x.scalar_type() == torch::kFloat32, "NCHW float32");
    auto xc = x.contiguous();
    auto m = mult.contiguous();
    TORCH_CHECK(m.numel() == xc.size(1), "one multiplier per channel");
    auto y = torch::empty({xc.size(0), 1, xc.size(2), xc.size(3)}, xc.options());
    mul_tanh_sum_channels_launch(xc.data_ptr<float>(), m.data_ptr<float>(), y.data_ptr<float>(), xc.size(0),
                                 (int)xc.size(1), xc.size(2) * xc.size(3), at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

reduce_ext = load_inline(
    name="audit_pub_l2_004_mul_tanh_sum",
    cpp_sources="torch::Tensor mul_tanh_sum(torch::Tensor x, torch::Tensor mult);",
    cuda_sources=[reduce_kernel_source, reduce_wrapper_source],
    functions=["mul_tanh_sum"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, multiplier_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.multiplier = nn.Parameter(1.0 + 0.1 * torch.randn(multiplier_shape))

    def forward(self, x):
        return reduce_ext.mul_tanh_sum(self.conv(x), self.multiplier)
