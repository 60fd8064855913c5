import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

RMS_THREADS = 256

rms_norm_cuda_source = r"""
#include <torch/extension.h>

// x is (B, C, S) with S = H*W flattened; the mean of squares runs over C for each (b, s).
// One thread per (b, s): consecutive threads read consecutive s, so every channel step is coalesced.
__global__ void rms_norm_channels_kernel(const float* __restrict__ x, float* __restrict__ out,
                                         int B, int C, long S, float eps) {
    long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
    long total = (long)B * S;
    if (idx >= total) return;
    long b = idx / S;
    long s = idx % S;
    const float* px = x + b * C * S + s;
    float* po = out + b * C * S + s;

    float sum_sq = 0.0f;
    for (int c = 0; c < C; ++c) {
        float v = px[(long)c * S];
        sum_sq += v * v;
    }
    float rms = sqrtf(sum_sq / (float)C + eps);
    for (int c = 0; c < C; ++c) {
        po[(long)c * S] = px[(long)c * S] / rms;
    }
}

torch::Tensor rms_norm_cuda(torch::Tensor x, double eps, int threads) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() >= 2, "x must have a channel dimension");
    auto xc = x.contiguous();
    int B = xc.size(0);
    int C = xc.size(1);
    long S = xc.numel() / ((long)B * C);
    auto out = torch::empty_like(xc);
    long total = (long)B * S;
    if (total == 0) return out;
    long blocks = (total + threads - 1) / threads;
    rms_norm_channels_kernel<<<(unsigned)blocks, threads>>>(xc.data_ptr<float>(), out.data_ptr<float>(), B, C, S, (float)eps);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "rms_norm_channels_kernel: ", cudaGetErrorString(err));
    return out;
}
"""

rms_norm_cpp_source = "torch::Tensor rms_norm_cuda(torch::Tensor x, double eps, int threads);"

rms_norm = load_inline(
    name="kbcorpus_l1_rmsnorm_channels",
    cpp_sources=rms_norm_cpp_source,
    cuda_sources=rms_norm_cuda_source,
    functions=["rms_norm_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, eps: float):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm.rms_norm_cuda(x, self.eps, RMS_THREADS)
