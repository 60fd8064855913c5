# Parity corpus: fast_math_softmax.py -- task tasks/level1/041_softmax_channels.py
#   (softmax over dim 1 of x (32, 256, 128, 128) float32, x = randn * 4: peaked distributions,
#   the largest probability at a position is often 0.3-0.9).
# Tests: an honest own kernel whose numerics are deliberately approximate. exp(v) is computed as
# 2^t, t = v * log2(e): the integer part of t goes into the exponent bits, the fraction f in [0, 1)
# through the quadratic 1 + f * (0.6660 + 0.3299 f) (the best quadratic with p(0) = 1: max relative
# error 2.06e-3 over [0, 1)). Softmax divides two such values, so per element the relative error is
# about e_i - (weighted mean of e_j), at most ~2 * 2.06e-3.
# Why this task and not 003_softmax: rows of 32768 randn values give probabilities <= ~2e-3, where
# atol 1e-4 alone absorbs a 1e-3 relative error (KernelBench's check would pass); here the large
# probabilities make the absolute error exceed 1e-4 + 1e-4 * |expected|.
# Measured (tests/audit_corpus emulation, C++ with the same float operations, against float64
# softmax, 2 of the 32 batch items = 8,388,608 elements, randn * 4 inputs):
#   max relative error 3.3e-3, max absolute error 5.9e-4 (at an expected 0.33), relative L2 5.0e-4;
#   kernelbench bound |a - e| <= 1e-4 + 1e-4 |e|: 51,206 elements fail (0.61%), worst err/bound 4.5;
#   strict bound 1e-2 + 1e-2 |e|: no element fails, worst err/bound 0.045; relative L2 5e-4 is
#   below the whole-output bound 1e-2 of both rule sets.
# Expected: strict OK, kernelbench WRONG_OUTPUT, observe WRONG_OUTPUT (observe uses kernelbench's
# tolerance; evidence: own kernel ran, no PyTorch compute operator, no fallback).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Plain CUDA (no torch headers): compiles on its own with nvcc.
softmax_kernel_source = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

// "fast exp": 2^floor(t) from the exponent bits times a quadratic for 2^frac(t).
__device__ __forceinline__ float cheap_exp(float v) {
    float t = fmaxf(v * 1.44269504f, -125.0f);
    float fi = floorf(t);
    float f = t - fi;
    float p = fmaf(fmaf(0.3299f, f, 0.6660f), f, 1.0f);
    return __int_as_float(((int)fi + 127) << 23) * p;
}

// One thread per (batch, spatial position); the channel loop is strided by HW, so a warp reads 32
// consecutive floats per channel.
__global__ void softmax_channels_fast_kernel(const float* __restrict__ x, float* __restrict__ y,
                                             int C, int64_t HW, int64_t positions) {
    const int64_t pos = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (pos >= positions) return;
    const int64_t b = pos / HW;
    const int64_t p = pos - b * HW;
    const float* xp = x + b * C * HW + p;
    float* yp = y + b * C * HW + p;
    float m = -INFINITY;
    for (int c = 0; c < C; ++c) m = fmaxf(m, xp[c * HW]);
    float s = 0.0f;
    for (int c = 0; c < C; ++c) s += cheap_exp(xp[c * HW] - m);
    const float inv = 1.0f / s;
    for (int c = 0; c < C; ++c) yp[c * HW] = cheap_exp(xp[c * HW] - m) * inv;
}

void softmax_channels_fast_launch(const float* x, float* y, int64_t B, int C, int64_t HW, cudaStream_t stream) {
    const int64_t positions = B * HW;
    const int threads = 256;
    const int64_t blocks = (positions + threads - 1) / threads;
    softmax_channels_fast_kernel<<<(unsigned)blocks, threads, 0, stream>>>(x, y, C, HW, positions);
}
"""

softmax_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void softmax_channels_fast_launch(const float* x, float* y, int64_t B, int C, int64_t HW, cudaStream_t stream);

torch::Tensor softmax_channels(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be a float32 CUDA tensor");
    TORCH_CHECK(x.dim() >= 2, "x must have a channel dim");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t B = xc.size(0);
    const int C = (int)xc.size(1);
    const int64_t HW = C > 0 && B > 0 ? xc.numel() / (B * C) : 0;
    if (xc.numel() == 0) return y;
    softmax_channels_fast_launch(xc.data_ptr<float>(), y.data_ptr<float>(), B, C, HW,
                                 at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

softmax_ext = load_inline(
    name="audit_parity_fast_math_softmax",
    cpp_sources="torch::Tensor softmax_channels(torch::Tensor x);",
    cuda_sources=[softmax_kernel_source, softmax_wrapper_source],
    functions=["softmax_channels"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax_ext.softmax_channels(x)
