import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Conv3d stays in PyTorch. * scale -> ReLU -> logsumexp over channels is one kernel: one thread
# per (n, d, h, w) reads its C channel values (stride D*H*W, coalesced across threads), takes the
# max, then sums exp(v - max) in a second pass over the same (cached) values.
scale_relu_lse_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cmath>

__global__ void scale_relu_logsumexp_channels_kernel(const float* __restrict__ x, float* __restrict__ out,
                                                     int N, int C, int64_t spatial, float scale) {
    const int64_t total = (int64_t)N * spatial;
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int64_t n = idx / spatial;
    const int64_t s = idx - n * spatial;
    const float* p = x + n * C * spatial + s;

    float m = -INFINITY;
    for (int c = 0; c < C; ++c) {
        const float v = fmaxf(p[(int64_t)c * spatial] * scale, 0.0f);
        m = fmaxf(m, v);
    }
    float sum = 0.0f;
    for (int c = 0; c < C; ++c) {
        const float v = fmaxf(p[(int64_t)c * spatial] * scale, 0.0f);
        sum += expf(v - m);
    }
    out[idx] = m + logf(sum);
}

torch::Tensor scale_relu_logsumexp(torch::Tensor x, double scale) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 5 && x.scalar_type() == torch::kFloat32, "x must be a float32 NCDHW tensor");
    x = x.contiguous();
    const int N = x.size(0), C = x.size(1);
    const int64_t spatial = x.size(2) * x.size(3) * x.size(4);
    auto out = torch::empty({x.size(0), 1, x.size(2), x.size(3), x.size(4)}, x.options());
    const int64_t total = (int64_t)N * spatial;
    if (total == 0) return out;
    const int threads = 256;
    const int64_t blocks = (total + threads - 1) / threads;
    scale_relu_logsumexp_channels_kernel<<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), N, C, spatial, (float)scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

scale_relu_lse_cpp = "torch::Tensor scale_relu_logsumexp(torch::Tensor x, double scale);"

scale_relu_lse = load_inline(
    name="kb_published_l2_041_scale_relu_logsumexp",
    cpp_sources=scale_relu_lse_cpp,
    cuda_sources=scale_relu_lse_source,
    functions=["scale_relu_logsumexp"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, scale_factor):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=padding)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        return scale_relu_lse.scale_relu_logsumexp(x, self.scale_factor)
