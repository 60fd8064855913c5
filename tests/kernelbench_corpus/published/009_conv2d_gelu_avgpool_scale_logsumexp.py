import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The 3x3 convolution stays in PyTorch; one kernel does GELU -> AvgPool2d(k) -> * scale ->
# logsumexp over channels: one thread per pooled output pixel walks the channels with an
# online (running max, running sum) logsumexp, so the pooled tensor is never written.
fused_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cmath>

__device__ __forceinline__ float gelu_exact(float v) {
    return 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
}

__global__ void gelu_avgpool_scale_logsumexp_kernel(const float* __restrict__ x, float* __restrict__ out,
                                                    int N, int C, int H, int W, int OH, int OW, int k,
                                                    float scale) {
    const int64_t total = (int64_t)N * OH * OW;
    const int64_t plane = (int64_t)H * W;
    const float window = (float)(k * k);
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (int64_t)gridDim.x * blockDim.x) {
        const int ow = (int)(idx % OW);
        const int oh = (int)((idx / OW) % OH);
        const int n = (int)(idx / ((int64_t)OW * OH));
        const float* p = x + (int64_t)n * C * plane + (int64_t)(oh * k) * W + (int64_t)ow * k;
        float running_max = -INFINITY;
        float running_sum = 0.0f;
        for (int c = 0; c < C; ++c) {
            const float* q = p + (int64_t)c * plane;
            float acc = 0.0f;
            for (int i = 0; i < k; ++i)
                for (int j = 0; j < k; ++j) acc += gelu_exact(q[(int64_t)i * W + j]);
            const float v = (acc / window) * scale;
            if (v > running_max) {
                running_sum = running_sum * expf(running_max - v) + 1.0f;
                running_max = v;
            } else {
                running_sum += expf(v - running_max);
            }
        }
        out[idx] = running_max + logf(running_sum);
    }
}

torch::Tensor gelu_avgpool_scale_logsumexp(torch::Tensor x, int64_t pool, double scale) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 4, "x must be a 4-D CUDA tensor");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "x must be float32");
    x = x.contiguous();
    const int N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    const int k = (int)pool;
    const int OH = H / k, OW = W / k;   // AvgPool2d(k): stride k, no padding, floor
    auto out = torch::empty({N, 1, OH, OW}, x.options());
    const int64_t total = (int64_t)N * OH * OW;
    if (total == 0) return out;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((total + threads - 1) / threads, 8192);
    gelu_avgpool_scale_logsumexp_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), N, C, H, W, OH, OW, k, (float)scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

fused_cpp = "torch::Tensor gelu_avgpool_scale_logsumexp(torch::Tensor x, int64_t pool, double scale);"

fused_ops = load_inline(
    name="kb_published_l2_009_gelu_avgpool_lse",
    cpp_sources=fused_cpp,
    cuda_sources=fused_source,
    functions=["gelu_avgpool_scale_logsumexp"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, pool_kernel_size, scale_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.pool_kernel_size = pool_kernel_size
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        return fused_ops.gelu_avgpool_scale_logsumexp(x, self.pool_kernel_size, self.scale_factor)
