# Published-style solution for tasks/level2/098_bmm_divide_addinput_relu_layernorm.py: torch.bmm in
# PyTorch, then one block per row (n = 512, 4 values per thread in registers): / divisor + skip ->
# ReLU -> LayerNorm with self.ln's weight, bias and eps (two-pass mean / biased variance).
# Expected: kernelbench OK, strict REJECTED (aten bmm).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ln_kernel_source = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#define LN_THREADS 128
#define LN_PER_THREAD 4  // n = LN_THREADS * LN_PER_THREAD = 512

__device__ __forceinline__ float block_sum(float v, float* buf) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) buf[warp] = v;
    __syncthreads();
    float t = 0.0f;
    for (int w = 0; w < LN_THREADS / 32; ++w) t += buf[w];
    return t;
}

__global__ void __launch_bounds__(LN_THREADS) div_add_relu_layernorm_kernel(
        const float* __restrict__ x, const float* __restrict__ skip, const float* __restrict__ gamma,
        const float* __restrict__ beta, float* __restrict__ y, float inv_div, float eps) {
    __shared__ float buf[LN_THREADS / 32];
    const int n = LN_THREADS * LN_PER_THREAD;
    const int64_t base = (int64_t)blockIdx.x * n;
    float v[LN_PER_THREAD];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < LN_PER_THREAD; ++k) {
        const int i = threadIdx.x + k * LN_THREADS;
        v[k] = fmaxf(x[base + i] * inv_div + skip[base + i], 0.0f);
        s += v[k];
    }
    const float mean = block_sum(s, buf) / n;
    float q = 0.0f;
#pragma unroll
    for (int k = 0; k < LN_PER_THREAD; ++k) { const float d = v[k] - mean; q += d * d; }
    const float rstd = rsqrtf(block_sum(q, buf) / n + eps);
#pragma unroll
    for (int k = 0; k < LN_PER_THREAD; ++k) {
        const int i = threadIdx.x + k * LN_THREADS;
        y[base + i] = (v[k] - mean) * rstd * gamma[i] + beta[i];
    }
}

int div_add_relu_layernorm_launch(const float* x, const float* skip, const float* gamma, const float* beta, float* y,
                                  int64_t rows, int n, float inv_div, float eps, cudaStream_t stream) {
    if (n != LN_THREADS * LN_PER_THREAD) return -1;
    if (rows > 0) div_add_relu_layernorm_kernel<<<(unsigned)rows, LN_THREADS, 0, stream>>>(x, skip, gamma, beta, y, inv_div, eps);
    return 0;
}
"""

ln_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

int div_add_relu_layernorm_launch(const float* x, const float* skip, const float* gamma, const float* beta, float* y,
                                  int64_t rows, int n, float inv_div, float eps, cudaStream_t stream);

torch::Tensor div_add_relu_layernorm(torch::Tensor x, torch::Tensor skip, torch::Tensor gamma, torch::Tensor beta,
                                     double divisor, double eps) {
    TORCH_CHECK(x.sizes() == skip.sizes(), "x and skip: same shape");
    auto xc = x.contiguous();
    auto sc = skip.contiguous();
    auto y = torch::empty_like(xc);
    const int n = (int)xc.size(-1);
    const int rc = div_add_relu_layernorm_launch(xc.data_ptr<float>(), sc.data_ptr<float>(),
        gamma.contiguous().data_ptr<float>(), beta.contiguous().data_ptr<float>(), y.data_ptr<float>(),
        xc.numel() / n, n, (float)(1.0 / divisor), (float)eps, at::cuda::getCurrentCUDAStream());
    TORCH_CHECK(rc == 0, "kernel compiled for n = 512 only");
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

fused_ln = load_inline(
    name="audit_pub_l2_098_div_add_relu_layernorm",
    cpp_sources="torch::Tensor div_add_relu_layernorm(torch::Tensor x, torch::Tensor skip, torch::Tensor gamma, "
                "torch::Tensor beta, double divisor, double eps);",
    cuda_sources=[ln_kernel_source, ln_wrapper_source],
    functions=["div_add_relu_layernorm"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, divisor, normalized_shape):
        super().__init__()
        self.divisor = divisor
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, a, b, skip):
        x = torch.bmm(a, b)
        return fused_ln.div_add_relu_layernorm(x, skip, self.ln.weight, self.ln.bias, self.divisor, self.ln.eps)
