# Published-style solution for tasks/level2/019_conv2d_addinput_relu_avgpool.py: Conv2d in PyTorch,
# skip add + ReLU + AvgPool2d(2) fused into one kernel, called inside try/except with the PyTorch
# chain as fallback (never taken for the task's inputs). Expected: kernelbench REJECTED and strict
# REJECTED (try/except), observe OK (no fallback ran; aten convolution allowed there).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

fused_kernel_source = r"""
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void add_relu_avgpool2_kernel(const float* __restrict__ x, const float* __restrict__ skip,
                                         float* __restrict__ y, int H, int W, int OH, int OW, int64_t total) {
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int ow = idx % OW;
    const int oh = (idx / OW) % OH;
    const int64_t plane = idx / ((int64_t)OW * OH);
    const int64_t base = plane * H * W + (int64_t)(2 * oh) * W + 2 * ow;
    float s = 0.0f;
    s += fmaxf(x[base] + skip[base], 0.0f);
    s += fmaxf(x[base + 1] + skip[base + 1], 0.0f);
    s += fmaxf(x[base + W] + skip[base + W], 0.0f);
    s += fmaxf(x[base + W + 1] + skip[base + W + 1], 0.0f);
    y[idx] = s * 0.25f;
}

void add_relu_avgpool2_launch(const float* x, const float* skip, float* y, int64_t planes, int H, int W,
                              cudaStream_t stream) {
    const int OH = H / 2, OW = W / 2;
    const int64_t total = planes * OH * OW;
    if (total == 0) return;
    add_relu_avgpool2_kernel<<<(unsigned)((total + 255) / 256), 256, 0, stream>>>(x, skip, y, H, W, OH, OW, total);
}
"""

fused_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void add_relu_avgpool2_launch(const float* x, const float* skip, float* y, int64_t planes, int H, int W,
                              cudaStream_t stream);

torch::Tensor add_relu_avgpool2(torch::Tensor x, torch::Tensor skip) {
    TORCH_CHECK(x.dim() == 4 && x.sizes() == skip.sizes(), "x and skip: same NCHW shape");
    auto xc = x.contiguous();
    auto sc = skip.contiguous();
    const int64_t N = xc.size(0), C = xc.size(1), H = xc.size(2), W = xc.size(3);
    auto y = torch::empty({N, C, H / 2, W / 2}, xc.options());
    add_relu_avgpool2_launch(xc.data_ptr<float>(), sc.data_ptr<float>(), y.data_ptr<float>(), N * C, (int)H, (int)W,
                             at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

try:
    fused = load_inline(
        name="audit_pub_l2_019_add_relu_avgpool",
        cpp_sources="torch::Tensor add_relu_avgpool2(torch::Tensor x, torch::Tensor skip);",
        cuda_sources=[fused_kernel_source, fused_wrapper_source],
        functions=["add_relu_avgpool2"],
        extra_cuda_cflags=["-O3"],
        verbose=False,
    )
except Exception:
    fused = None


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.pool_kernel_size = pool_kernel_size

    def forward(self, x, skip):
        x = self.conv(x)
        if fused is not None and self.pool_kernel_size == 2:
            try:
                return fused.add_relu_avgpool2(x, skip)
            except Exception:
                pass
        return F.avg_pool2d(torch.relu(x + skip), self.pool_kernel_size)
