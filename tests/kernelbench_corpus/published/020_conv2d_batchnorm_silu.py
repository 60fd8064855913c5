import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Conv2d stays in PyTorch. BatchNorm2d in training mode (batch statistics, biased variance) and
# SiLU are custom kernels: one block per channel reduces (sum, sum of squares) over N x H x W,
# then a float4 elementwise pass normalises, applies weight/bias and SiLU.
# The statistics are always the batch's (the reference module is in training mode), whatever
# self.training says; running_mean/running_var are not updated (only the output is compared).
bn_silu_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

template <int BLOCK>
__global__ void bn_channel_stats_kernel(const float* __restrict__ x, float* __restrict__ mean_out,
                                        float* __restrict__ invstd_out, int N, int C, int64_t hw, float eps) {
    const int c = blockIdx.x;
    const int64_t hw_vec = hw / 4;
    float sum = 0.0f, sumsq = 0.0f;
    for (int n = 0; n < N; ++n) {
        const float4* plane = reinterpret_cast<const float4*>(x + ((int64_t)n * C + c) * hw);
        for (int64_t i = threadIdx.x; i < hw_vec; i += BLOCK) {
            const float4 v = plane[i];
            sum += (v.x + v.y) + (v.z + v.w);
            sumsq += (v.x * v.x + v.y * v.y) + (v.z * v.z + v.w * v.w);
        }
    }
    // shared-memory tree reduction, in double for the last steps' large partial sums
    __shared__ double s_sum[BLOCK];
    __shared__ double s_sq[BLOCK];
    s_sum[threadIdx.x] = (double)sum;
    s_sq[threadIdx.x] = (double)sumsq;
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            s_sum[threadIdx.x] += s_sum[threadIdx.x + stride];
            s_sq[threadIdx.x] += s_sq[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        const double count = (double)N * (double)hw;
        const double mean = s_sum[0] / count;
        double var = s_sq[0] / count - mean * mean;
        if (var < 0.0) var = 0.0;
        mean_out[c] = (float)mean;
        invstd_out[c] = (float)(1.0 / sqrt(var + (double)eps));
    }
}

__global__ void bn_apply_silu_kernel(const float4* __restrict__ x, const float* __restrict__ mean,
                                     const float* __restrict__ invstd, const float* __restrict__ weight,
                                     const float* __restrict__ bias, float4* __restrict__ out, int64_t n_vec,
                                     int64_t hw_vec, int C) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_vec;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int c = (int)((i / hw_vec) % C);
        const float m = mean[c], is = invstd[c], w = weight[c], b = bias[c];
        float4 v = x[i];
        float y;
        y = (v.x - m) * is * w + b; v.x = y / (1.0f + expf(-y));
        y = (v.y - m) * is * w + b; v.y = y / (1.0f + expf(-y));
        y = (v.z - m) * is * w + b; v.z = y / (1.0f + expf(-y));
        y = (v.w - m) * is * w + b; v.w = y / (1.0f + expf(-y));
        out[i] = v;
    }
}

torch::Tensor batchnorm_train_silu(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    TORCH_CHECK(x.is_cuda(), "x must be on CUDA");
    TORCH_CHECK(x.dim() == 4 && x.scalar_type() == torch::kFloat32, "x must be float32 NCHW");
    x = x.contiguous();
    weight = weight.contiguous();
    bias = bias.contiguous();
    const int N = (int)x.size(0), C = (int)x.size(1);
    const int64_t hw = x.size(2) * x.size(3);
    TORCH_CHECK(hw % 4 == 0, "H * W must be a multiple of 4");
    auto mean = torch::empty({C}, x.options());
    auto invstd = torch::empty({C}, x.options());
    auto out = torch::empty_like(x);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();

    constexpr int kStatsBlock = 512;
    bn_channel_stats_kernel<kStatsBlock><<<C, kStatsBlock, 0, stream>>>(
        x.data_ptr<float>(), mean.data_ptr<float>(), invstd.data_ptr<float>(), N, C, hw, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();

    const int64_t n_vec = x.numel() / 4;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n_vec + threads - 1) / threads, 132 * 32);
    bn_apply_silu_kernel<<<blocks, threads, 0, stream>>>(
        reinterpret_cast<const float4*>(x.data_ptr<float>()), mean.data_ptr<float>(), invstd.data_ptr<float>(),
        weight.data_ptr<float>(), bias.data_ptr<float>(), reinterpret_cast<float4*>(out.data_ptr<float>()),
        n_vec, hw / 4, C);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

bn_silu_cpp = "torch::Tensor batchnorm_train_silu(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);"

bn_silu = load_inline(
    name="kb_published_l2_020_batchnorm_silu",
    cpp_sources=bn_silu_cpp,
    cuda_sources=bn_silu_source,
    functions=["batchnorm_train_silu"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        x = self.conv(x)
        return bn_silu.batchnorm_train_silu(x, self.bn.weight, self.bn.bias, self.bn.eps)
