import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Conv3d stays in PyTorch; GELU (exact erf form) -> MaxPool3d(k) -> + per-channel bias is one
# kernel, one thread per pooled output, dispatched over floating types.
gelu_pool_bias_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/Dispatch.h>

__device__ __forceinline__ float gelu_fn(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f)); }
__device__ __forceinline__ double gelu_fn(double v) { return 0.5 * v * (1.0 + erf(v * 0.70710678118654752440)); }

template <typename scalar_t>
__global__ void gelu_maxpool3d_bias_kernel(const scalar_t* __restrict__ x, const scalar_t* __restrict__ bias,
                                           scalar_t* __restrict__ y, int64_t total, int C, int D, int H, int W,
                                           int OD, int OH, int OW, int k) {
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (int64_t)gridDim.x * blockDim.x) {
        int64_t t = idx;
        const int ow = t % OW; t /= OW;
        const int oh = t % OH; t /= OH;
        const int od = t % OD; t /= OD;
        const int c = t % C;
        const int64_t n = t / C;
        const scalar_t* base = x + ((n * C + c) * D + (int64_t)od * k) * H * W + (int64_t)(oh * k) * W + ow * k;
        scalar_t best = -INFINITY;
        for (int kd = 0; kd < k; ++kd) {
            for (int kh = 0; kh < k; ++kh) {
                const scalar_t* row = base + ((int64_t)kd * H + kh) * W;
                for (int kw = 0; kw < k; ++kw) {
                    const scalar_t v = gelu_fn(row[kw]);
                    if (v > best || isnan(v)) best = v;   // NaN propagates, as max_pool3d does
                }
            }
        }
        y[idx] = best + bias[c];
    }
}

torch::Tensor gelu_maxpool3d_bias(torch::Tensor x, torch::Tensor bias, int64_t k) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 5, "x must be NCDHW");
    x = x.contiguous();
    bias = bias.contiguous().to(x.scalar_type());
    const int64_t N = x.size(0);
    const int C = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4);
    TORCH_CHECK(bias.numel() == C, "bias must have C elements");
    const int OD = D / k, OH = H / k, OW = W / k;   // MaxPool3d(k): stride k, floor
    auto y = torch::empty({N, C, OD, OH, OW}, x.options());
    const int64_t total = y.numel();
    if (total == 0) return y;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((total + threads - 1) / threads, 65535);
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "gelu_maxpool3d_bias", ([&] {
        gelu_maxpool3d_bias_kernel<scalar_t><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
            x.data_ptr<scalar_t>(), bias.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), total, C, D, H, W,
            OD, OH, OW, (int)k);
    }));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

gelu_pool_bias_cpp = "torch::Tensor gelu_maxpool3d_bias(torch::Tensor x, torch::Tensor bias, int64_t k);"

gelu_pool_bias = load_inline(
    name="kb_published_l2_031_gelu_maxpool3d_bias",
    cpp_sources=gelu_pool_bias_cpp,
    cuda_sources=gelu_pool_bias_source,
    functions=["gelu_maxpool3d_bias"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.pool_kernel_size = pool_kernel_size
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        x = self.conv(x)
        return gelu_pool_bias.gelu_maxpool3d_bias(x, self.bias, self.pool_kernel_size)
