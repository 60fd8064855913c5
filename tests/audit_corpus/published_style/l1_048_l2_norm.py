# Published-style solution for tasks/level1/048_l2_norm.py (x (32, 32, 256, 512), L2 norm over dim 1):
# one thread per (batch, spatial position) looping over the 32 channels (coalesced across threads),
# then x * (1 / norm). Expected: strict OK, kernelbench OK.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

l2norm_kernel_source = r"""
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void l2_norm_channels_kernel(const float* __restrict__ x, float* __restrict__ y,
                                        int C, int64_t HW, int64_t positions) {
    const int64_t pos = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (pos >= positions) return;
    const int64_t b = pos / HW, p = pos % HW;
    const float* xp = x + b * C * HW + p;
    float* yp = y + b * C * HW + p;
    float s = 0.0f;
    for (int c = 0; c < C; ++c) { const float v = xp[c * HW]; s = fmaf(v, v, s); }
    const float inv = 1.0f / sqrtf(s);
    for (int c = 0; c < C; ++c) yp[c * HW] = xp[c * HW] * inv;
}

void l2_norm_channels_launch(const float* x, float* y, int64_t B, int C, int64_t HW, cudaStream_t stream) {
    const int64_t positions = B * HW;
    l2_norm_channels_kernel<<<(unsigned)((positions + 255) / 256), 256, 0, stream>>>(x, y, C, HW, positions);
}
"""

l2norm_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void l2_norm_channels_launch(const float* x, float* y, int64_t B, int C, int64_t HW, cudaStream_t stream);

torch::Tensor l2_norm(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() >= 2 && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;
    const int64_t B = xc.size(0), C = xc.size(1);
    l2_norm_channels_launch(xc.data_ptr<float>(), y.data_ptr<float>(), B, (int)C, xc.numel() / (B * C),
                            at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

l2norm = load_inline(
    name="audit_pub_l1_048_l2_norm",
    cpp_sources="torch::Tensor l2_norm(torch::Tensor x);",
    cuda_sources=[l2norm_kernel_source, l2norm_wrapper_source],
    functions=["l2_norm"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return l2norm.l2_norm(x)
