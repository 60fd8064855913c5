import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The GEMM stays in PyTorch (nn.Linear). The SwiGLU epilogue (split the features in halves,
# SiLU(gate) * value, * scale) is one float4 grid-stride kernel writing the half-width output,
# so the two chunks are never materialised.
swiglu_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__device__ __forceinline__ float silu_f(float g) { return g / (1.0f + expf(-g)); }

__global__ void swiglu_scale_vec4_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t rows,
                                         int64_t half, float scale) {
    const int64_t half_vec = half / 4;
    const int64_t total = rows * half_vec;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / half_vec;
        const int64_t j = i - r * half_vec;
        const float4 g = reinterpret_cast<const float4*>(x + r * 2 * half)[j];
        const float4 v = reinterpret_cast<const float4*>(x + r * 2 * half + half)[j];
        float4 o;
        o.x = silu_f(g.x) * v.x * scale;
        o.y = silu_f(g.y) * v.y * scale;
        o.z = silu_f(g.z) * v.z * scale;
        o.w = silu_f(g.w) * v.w * scale;
        reinterpret_cast<float4*>(out)[i] = o;
    }
}

torch::Tensor swiglu_scale(torch::Tensor x, double scale) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be float32 CUDA");
    x = x.contiguous();
    const int64_t features = x.size(-1);
    TORCH_CHECK(features % 8 == 0, "feature count must be a multiple of 8 (two float4-aligned halves)");
    const int64_t half = features / 2;
    const int64_t rows = x.numel() / features;
    auto sizes = x.sizes().vec();
    sizes.back() = half;
    auto out = torch::empty(sizes, x.options());
    const int64_t total_vec = rows * (half / 4);
    if (total_vec == 0) return out;
    const int threads = 256;
    const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    const int blocks = (int)std::min<int64_t>((total_vec + threads - 1) / threads, (int64_t)sms * 8);
    swiglu_scale_vec4_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), rows, half, (float)scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

swiglu_cpp = "torch::Tensor swiglu_scale(torch::Tensor x, double scale);"

swiglu = load_inline(
    name="kb_published_l2_078_swiglu_scale",
    cpp_sources=swiglu_cpp,
    cuda_sources=swiglu_source,
    functions=["swiglu_scale"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.linear(x)
        return swiglu.swiglu_scale(x, self.scale_factor)
