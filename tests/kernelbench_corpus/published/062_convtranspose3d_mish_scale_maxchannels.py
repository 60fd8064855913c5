import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# ConvTranspose3d stays in PyTorch. Mish -> * scale -> amax over channels in one kernel: one thread
# per (n, d, h, w), looping over channels (Mish is not monotonic, so every value is computed).
mish_max_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

template <int C_FIXED>
__global__ void mish_scale_channel_max_kernel(const float* __restrict__ x, float* __restrict__ out, int n_batch,
                                              int channels, int64_t spatial, float scale) {
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (int64_t)n_batch * spatial) return;
    const int64_t n = idx / spatial;
    const int64_t s = idx % spatial;
    const int C = C_FIXED > 0 ? C_FIXED : channels;
    const float* p = x + n * C * spatial + s;
    float best = -INFINITY;
    #pragma unroll 8
    for (int c = 0; c < C; ++c) {
        const float v = __ldg(p + (int64_t)c * spatial);
        const float mish = v * tanhf(log1pf(expf(v)));
        const float r = mish * scale;
        if (r > best || isnan(r)) best = r;
    }
    out[idx] = best;
}

torch::Tensor mish_scale_channel_max(torch::Tensor x, double scale) {
    TORCH_CHECK(x.is_cuda(), "expected CUDA tensor");
    TORCH_CHECK(x.dim() == 5, "expected NCDHW");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "expected float32");
    auto xc = x.contiguous();
    const int N = xc.size(0), C = xc.size(1);
    const int64_t spatial = xc.size(2) * xc.size(3) * xc.size(4);
    auto out = torch::empty({xc.size(0), 1, xc.size(2), xc.size(3), xc.size(4)}, xc.options());
    const int64_t total = (int64_t)N * spatial;
    if (total == 0) return out;
    const int threads = 256;
    const unsigned blocks = (unsigned)((total + threads - 1) / threads);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (C == 32) {
        mish_scale_channel_max_kernel<32><<<blocks, threads, 0, stream>>>(
            xc.data_ptr<float>(), out.data_ptr<float>(), N, C, spatial, (float)scale);
    } else {
        mish_scale_channel_max_kernel<0><<<blocks, threads, 0, stream>>>(
            xc.data_ptr<float>(), out.data_ptr<float>(), N, C, spatial, (float)scale);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

mish_max_cpp = "torch::Tensor mish_scale_channel_max(torch::Tensor x, double scale);"

mish_max = load_inline(
    name="kb_published_l2_062_mish_scale_channel_max",
    cpp_sources=mish_max_cpp,
    cuda_sources=mish_max_source,
    functions=["mish_scale_channel_max"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, scale_factor):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        return mish_max.mish_scale_channel_max(x, self.scale_factor)
