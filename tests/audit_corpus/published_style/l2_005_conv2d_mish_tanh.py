# Published-style solution for tasks/level2/005_conv2d_mish_tanh.py: Conv2d left to PyTorch (cuDNN),
# Mish and Tanh fused into one elementwise kernel. Expected: kernelbench OK, strict REJECTED (aten
# convolution).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

mish_tanh_kernel_source = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__global__ void mish_tanh_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const float v = x[i];
        const float sp = v > 20.0f ? v : log1pf(expf(v));
        y[i] = tanhf(v * tanhf(sp));
    }
}

void mish_tanh_launch(const float* x, float* y, int64_t n, cudaStream_t stream) {
    int64_t blocks = (n + 255) / 256;
    if (blocks > 8192) blocks = 8192;
    mish_tanh_kernel<<<(unsigned)blocks, 256, 0, stream>>>(x, y, n);
}
"""

mish_tanh_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void mish_tanh_launch(const float* x, float* y, int64_t n, cudaStream_t stream);

torch::Tensor mish_tanh_cuda(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;
    mish_tanh_launch(xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel(), at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

mish_tanh = load_inline(
    name="audit_pub_l2_005_mish_tanh",
    cpp_sources="torch::Tensor mish_tanh_cuda(torch::Tensor x);",
    cuda_sources=[mish_tanh_kernel_source, mish_tanh_wrapper_source],
    functions=["mish_tanh_cuda"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)

    def forward(self, x):
        return mish_tanh.mish_tanh_cuda(self.conv(x))
