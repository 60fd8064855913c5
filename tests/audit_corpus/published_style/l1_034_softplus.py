# Published-style solution for tasks/level1/034_softplus.py: plain load_inline; PyTorch's threshold
# (x > 20 returns x) and log1pf(expf(x)) below it. Expected: strict OK, kernelbench OK.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softplus_kernel_source = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__device__ __forceinline__ float softplus_op(float x) {
    return x > 20.0f ? x : log1pf(expf(x));
}

__global__ void softplus_vec4_kernel(const float4* __restrict__ in, float4* __restrict__ out, int64_t n4) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
        float4 v = in[i];
        v.x = softplus_op(v.x);
        v.y = softplus_op(v.y);
        v.z = softplus_op(v.z);
        v.w = softplus_op(v.w);
        out[i] = v;
    }
}

__global__ void softplus_tail_kernel(const float* __restrict__ in, float* __restrict__ out, int64_t start, int64_t n) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = softplus_op(in[i]);
}

void softplus_launch(const float* in, float* out, int64_t n, cudaStream_t stream) {
    const int threads = 256;
    const int64_t n4 = n / 4;
    if (n4 > 0) {
        int64_t blocks = (n4 + threads - 1) / threads;
        if (blocks > 4096) blocks = 4096;
        softplus_vec4_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), n4);
    }
    const int64_t rest = n - n4 * 4;
    if (rest > 0) softplus_tail_kernel<<<(unsigned)((rest + threads - 1) / threads), threads, 0, stream>>>(in, out, n4 * 4, n);
}
"""

softplus_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void softplus_launch(const float* in, float* out, int64_t n, cudaStream_t stream);

torch::Tensor softplus_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "softplus: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "softplus: x must be float32");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    if (xc.numel() == 0) return out;
    softplus_launch(xc.data_ptr<float>(), out.data_ptr<float>(), xc.numel(), at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

softplus_ext = load_inline(
    name="audit_pub_l1_034_softplus",
    cpp_sources="torch::Tensor softplus_forward(torch::Tensor x);",
    cuda_sources=[softplus_kernel_source, softplus_wrapper_source],
    functions=["softplus_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softplus_ext.softplus_forward(x)
