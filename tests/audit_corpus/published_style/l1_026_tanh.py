# Published-style solution for tasks/level1/026_tanh.py: the custom kernel inside try/except with a
# torch.tanh fallback; the kernel handles the task's float32 CUDA input, so the fallback never runs.
# Expected: strict REJECTED, kernelbench REJECTED (try/except), observe OK (no fallback ran).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

tanh_fast_kernel_source = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__device__ __forceinline__ float tanh_fast_op(float x) {
    return tanhf(x);
}

__global__ void tanh_fast_vec4_kernel(const float4* __restrict__ in, float4* __restrict__ out, int64_t n4) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
        float4 v = in[i];
        v.x = tanh_fast_op(v.x);
        v.y = tanh_fast_op(v.y);
        v.z = tanh_fast_op(v.z);
        v.w = tanh_fast_op(v.w);
        out[i] = v;
    }
}

__global__ void tanh_fast_tail_kernel(const float* __restrict__ in, float* __restrict__ out, int64_t start, int64_t n) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tanh_fast_op(in[i]);
}

void tanh_fast_launch(const float* in, float* out, int64_t n, cudaStream_t stream) {
    const int threads = 256;
    const int64_t n4 = n / 4;
    if (n4 > 0) {
        int64_t blocks = (n4 + threads - 1) / threads;
        if (blocks > 4096) blocks = 4096;
        tanh_fast_vec4_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), n4);
    }
    const int64_t rest = n - n4 * 4;
    if (rest > 0) tanh_fast_tail_kernel<<<(unsigned)((rest + threads - 1) / threads), threads, 0, stream>>>(in, out, n4 * 4, n);
}
"""

tanh_fast_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void tanh_fast_launch(const float* in, float* out, int64_t n, cudaStream_t stream);

torch::Tensor tanh_fast_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "tanh_fast: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "tanh_fast: x must be float32");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    if (xc.numel() == 0) return out;
    tanh_fast_launch(xc.data_ptr<float>(), out.data_ptr<float>(), xc.numel(), at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

try:
    tanh_fast_ext = load_inline(
        name="audit_pub_l1_026_tanh",
        cpp_sources="torch::Tensor tanh_fast_forward(torch::Tensor x);",
        cuda_sources=[tanh_fast_kernel_source, tanh_fast_wrapper_source],
        functions=["tanh_fast_forward"],
        extra_cuda_cflags=["-O3"],
        verbose=False,
    )
except Exception:
    tanh_fast_ext = None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if tanh_fast_ext is not None:
            try:
                return tanh_fast_ext.tanh_fast_forward(x)
            except Exception:
                pass
        return torch.tanh(x)
