import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Conv2d stays in PyTorch. InstanceNorm2d (no affine, biased variance, eps 1e-5) + tanh + learned
# per-channel multiplier in one kernel: one 256-thread block per (n, c) plane; the plane is held
# in registers (up to 4 float4 per thread = 4096 floats), mean and centred variance from it,
# warp-shuffle reductions, one read and one write of the conv output.
instnorm_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int kThreads = 256;
constexpr int kVecPerThread = 4;

__device__ __forceinline__ float warp_allreduce_sum(float v) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ float block_allreduce_sum(float v) {
    __shared__ float partial[kThreads / 32];
    v = warp_allreduce_sum(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    float total = lane < kThreads / 32 ? partial[lane] : 0.0f;
    total = warp_allreduce_sum(total);
    __syncthreads();
    return total;
}

__global__ void __launch_bounds__(kThreads)
instnorm_tanh_mul_kernel(const float* __restrict__ x, const float* __restrict__ multiplier,
                         float* __restrict__ out, int C, int hw, float eps) {
    const int plane = blockIdx.x;
    const int c = plane % C;
    const float4* src = reinterpret_cast<const float4*>(x + (int64_t)plane * hw);
    float4* dst = reinterpret_cast<float4*>(out + (int64_t)plane * hw);
    const int n_vec = hw / 4;

    float4 vals[kVecPerThread];
    float sum = 0.0f;
    #pragma unroll
    for (int k = 0; k < kVecPerThread; ++k) {
        const int i = threadIdx.x + k * kThreads;
        if (i < n_vec) {
            vals[k] = src[i];
            sum += (vals[k].x + vals[k].y) + (vals[k].z + vals[k].w);
        } else {
            vals[k] = make_float4(0.f, 0.f, 0.f, 0.f);
        }
    }
    const float mean = block_allreduce_sum(sum) / (float)hw;

    float sq = 0.0f;
    #pragma unroll
    for (int k = 0; k < kVecPerThread; ++k) {
        const int i = threadIdx.x + k * kThreads;
        if (i < n_vec) {
            const float a = vals[k].x - mean, b = vals[k].y - mean, cc = vals[k].z - mean, d = vals[k].w - mean;
            sq += (a * a + b * b) + (cc * cc + d * d);
        }
    }
    const float var = block_allreduce_sum(sq) / (float)hw;
    const float rstd = rsqrtf(var + eps);
    const float m = multiplier[c];

    #pragma unroll
    for (int k = 0; k < kVecPerThread; ++k) {
        const int i = threadIdx.x + k * kThreads;
        if (i < n_vec) {
            float4 r;
            r.x = tanhf((vals[k].x - mean) * rstd) * m;
            r.y = tanhf((vals[k].y - mean) * rstd) * m;
            r.z = tanhf((vals[k].z - mean) * rstd) * m;
            r.w = tanhf((vals[k].w - mean) * rstd) * m;
            dst[i] = r;
        }
    }
}

torch::Tensor instnorm_tanh_mul_cuda(torch::Tensor x, torch::Tensor multiplier, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 4, "x: float32 NCHW on CUDA");
    x = x.contiguous();
    multiplier = multiplier.contiguous();
    const int N = x.size(0), C = x.size(1);
    const int hw = x.size(2) * x.size(3);
    TORCH_CHECK(multiplier.numel() == C, "multiplier: one value per channel");
    TORCH_CHECK(hw % 4 == 0 && hw <= 4 * kThreads * kVecPerThread, "plane size unsupported by this kernel");
    auto out = torch::empty_like(x);
    instnorm_tanh_mul_kernel<<<N * C, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), multiplier.data_ptr<float>(), out.data_ptr<float>(), C, hw, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

instnorm_cpp = "torch::Tensor instnorm_tanh_mul_cuda(torch::Tensor x, torch::Tensor multiplier, double eps);"

instnorm_tanh_mul = load_inline(
    name="kb_published_l2_028_instnorm_tanh_mul",
    cpp_sources=instnorm_cpp,
    cuda_sources=instnorm_source,
    functions=["instnorm_tanh_mul_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3", "-lineinfo"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, multiplier_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.norm = nn.InstanceNorm2d(out_channels)
        self.multiplier = nn.Parameter(1.0 + 0.1 * torch.randn(multiplier_shape))

    def forward(self, x):
        x = self.conv(x)
        return instnorm_tanh_mul.instnorm_tanh_mul_cuda(x, self.multiplier, self.norm.eps)
