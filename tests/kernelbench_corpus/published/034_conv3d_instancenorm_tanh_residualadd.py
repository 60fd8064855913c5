import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Conv3d stays in PyTorch. InstanceNorm3d (affine=False, biased variance) -> tanh -> + the conv
# output, one kernel: a 512-thread block per (n, c) volume, two-pass statistics (mean, then the
# centred sum of squares) with float4 loads and shared-memory reductions, then the write pass.
source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#define THREADS 512

__device__ float block_sum_512(float v) {
    __shared__ float buf[THREADS];
    buf[threadIdx.x] = v;
    __syncthreads();
    #pragma unroll
    for (int s = THREADS / 2; s > 32; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    float r = 0.0f;
    if (threadIdx.x < 32) {
        r = buf[threadIdx.x] + buf[threadIdx.x + 32];
        for (int o = 16; o > 0; o >>= 1) r += __shfl_down_sync(0xffffffff, r, o);
        if (threadIdx.x == 0) buf[0] = r;
    }
    __syncthreads();
    r = buf[0];
    __syncthreads();
    return r;
}

__global__ void instnorm3d_tanh_residual_kernel(const float* __restrict__ x, float* __restrict__ out,
                                                int64_t volume, float eps) {
    const int64_t offset = (int64_t)blockIdx.x * volume;
    const float4* src = reinterpret_cast<const float4*>(x + offset);
    float4* dst = reinterpret_cast<float4*>(out + offset);
    const int64_t n_vec = volume / 4;

    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < n_vec; i += THREADS) {
        const float4 v = src[i];
        sum += v.x + v.y + v.z + v.w;
    }
    const float mean = block_sum_512(sum) / (float)volume;

    float sq = 0.0f;
    for (int64_t i = threadIdx.x; i < n_vec; i += THREADS) {
        const float4 v = src[i];
        const float a = v.x - mean, b = v.y - mean, c = v.z - mean, d = v.w - mean;
        sq += a * a + b * b + c * c + d * d;
    }
    const float var = block_sum_512(sq) / (float)volume;
    const float rstd = rsqrtf(var + eps);

    for (int64_t i = threadIdx.x; i < n_vec; i += THREADS) {
        const float4 v = src[i];
        float4 r;
        r.x = tanhf((v.x - mean) * rstd) + v.x;
        r.y = tanhf((v.y - mean) * rstd) + v.y;
        r.z = tanhf((v.z - mean) * rstd) + v.z;
        r.w = tanhf((v.w - mean) * rstd) + v.w;
        dst[i] = r;
    }
}

torch::Tensor instnorm3d_tanh_residual(torch::Tensor x, double eps) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 5, "x must be a 5-D CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    x = x.contiguous();
    const int64_t volume = x.size(2) * x.size(3) * x.size(4);
    TORCH_CHECK(volume % 4 == 0, "D * H * W must be a multiple of 4");
    auto out = torch::empty_like(x);
    const int64_t planes = x.size(0) * x.size(1);
    instnorm3d_tanh_residual_kernel<<<(unsigned)planes, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), volume, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor instnorm3d_tanh_residual(torch::Tensor x, double eps);"

instnorm_ext = load_inline(
    name="kb_published_l2_034_instnorm3d_tanh_residual",
    cpp_sources=cpp_source,
    cuda_sources=source,
    functions=["instnorm3d_tanh_residual"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=padding)
        self.eps = 1e-5  # nn.InstanceNorm3d's default

    def forward(self, x):
        x = self.conv(x)
        return instnorm_ext.instnorm3d_tanh_residual(x, self.eps)
