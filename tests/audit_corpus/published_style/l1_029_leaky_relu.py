# Published-style solution for tasks/level1/029_leaky_relu.py: plain load_inline, float4 grid-stride
# kernel, negative slope from the constructor. Expected: strict OK, kernelbench OK.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

leaky_kernel_source = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__device__ __forceinline__ float leaky_op(float x, float p) {
    return x > 0.0f ? x : x * p;
}

__global__ void leaky_vec4_kernel(const float4* __restrict__ in, float4* __restrict__ out, int64_t n4, float p) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
        float4 v = in[i];
        v.x = leaky_op(v.x, p);
        v.y = leaky_op(v.y, p);
        v.z = leaky_op(v.z, p);
        v.w = leaky_op(v.w, p);
        out[i] = v;
    }
}

__global__ void leaky_tail_kernel(const float* __restrict__ in, float* __restrict__ out, int64_t start, int64_t n, float p) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = leaky_op(in[i], p);
}

void leaky_launch(const float* in, float* out, int64_t n, float p, cudaStream_t stream) {
    const int threads = 256;
    const int64_t n4 = n / 4;
    if (n4 > 0) {
        int64_t blocks = (n4 + threads - 1) / threads;
        if (blocks > 4096) blocks = 4096;
        leaky_vec4_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), n4, p);
    }
    const int64_t rest = n - n4 * 4;
    if (rest > 0) leaky_tail_kernel<<<(unsigned)((rest + threads - 1) / threads), threads, 0, stream>>>(in, out, n4 * 4, n, p);
}
"""

leaky_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void leaky_launch(const float* in, float* out, int64_t n, float p, cudaStream_t stream);

torch::Tensor leaky_forward(torch::Tensor x, double p) {
    TORCH_CHECK(x.is_cuda(), "leaky: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "leaky: x must be float32");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    if (xc.numel() == 0) return out;
    leaky_launch(xc.data_ptr<float>(), out.data_ptr<float>(), xc.numel(), (float)p, at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

leaky_ext = load_inline(
    name="audit_pub_l1_029_leaky_relu",
    cpp_sources="torch::Tensor leaky_forward(torch::Tensor x, double p);",
    cuda_sources=[leaky_kernel_source, leaky_wrapper_source],
    functions=["leaky_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return leaky_ext.leaky_forward(x, self.negative_slope)
