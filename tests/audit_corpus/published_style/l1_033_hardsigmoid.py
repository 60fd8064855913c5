# Published-style solution for tasks/level1/033_hardsigmoid.py: kernel plus try/except fallback, but
# the wrapper was written for 2-D (batch, dim) inputs and the task's input is 4-D (16, 64, 256, 512),
# so it raises on every call and F.hardsigmoid computes every output (correct values).
# Expected: strict REJECTED, kernelbench REJECTED (try/except), observe OK (fallback in every call,
# no own kernel ran).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

import torch.nn.functional as F

hsig_kernel_source = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__device__ __forceinline__ float hsig_op(float x) {
    return fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f;
}

__global__ void hsig_vec4_kernel(const float4* __restrict__ in, float4* __restrict__ out, int64_t n4) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
        float4 v = in[i];
        v.x = hsig_op(v.x);
        v.y = hsig_op(v.y);
        v.z = hsig_op(v.z);
        v.w = hsig_op(v.w);
        out[i] = v;
    }
}

__global__ void hsig_tail_kernel(const float* __restrict__ in, float* __restrict__ out, int64_t start, int64_t n) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = hsig_op(in[i]);
}

void hsig_launch(const float* in, float* out, int64_t n, cudaStream_t stream) {
    const int threads = 256;
    const int64_t n4 = n / 4;
    if (n4 > 0) {
        int64_t blocks = (n4 + threads - 1) / threads;
        if (blocks > 4096) blocks = 4096;
        hsig_vec4_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), n4);
    }
    const int64_t rest = n - n4 * 4;
    if (rest > 0) hsig_tail_kernel<<<(unsigned)((rest + threads - 1) / threads), threads, 0, stream>>>(in, out, n4 * 4, n);
}
"""

hsig_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void hsig_launch(const float* in, float* out, int64_t n, cudaStream_t stream);

torch::Tensor hsig_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "hsig: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "hsig: x must be float32");
    TORCH_CHECK(x.dim() == 2, "hsig: expected a 2-D (batch, dim) tensor");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    if (xc.numel() == 0) return out;
    hsig_launch(xc.data_ptr<float>(), out.data_ptr<float>(), xc.numel(), at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

hsig_ext = load_inline(
    name="audit_pub_l1_033_hardsigmoid",
    cpp_sources="torch::Tensor hsig_forward(torch::Tensor x);",
    cuda_sources=[hsig_kernel_source, hsig_wrapper_source],
    functions=["hsig_forward"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        try:
            return hsig_ext.hsig_forward(x)
        except RuntimeError:
            return F.hardsigmoid(x)
