# Published-style solution for tasks/level1/058_mean_reduction.py (mean over dim 1 of (64, 256, 8192)):
# the (outer, R, inner) column view, one thread per (outer, inner) summing R values (coalesced).
# Raises for other dims (the task always reduces dim 1). Expected: strict OK, kernelbench OK.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

mean_kernel_source = r"""
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void mean_dim1_kernel(const float* __restrict__ x, float* __restrict__ y,
                                 int64_t outer, int R, int64_t inner) {
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= outer * inner) return;
    const int64_t o = idx / inner, i = idx % inner;
    const float* p = x + o * R * inner + i;
    float s = 0.0f;
#pragma unroll 8
    for (int r = 0; r < R; ++r) s += p[(int64_t)r * inner];
    y[idx] = s / (float)R;
}

void mean_dim1_launch(const float* x, float* y, int64_t outer, int R, int64_t inner, cudaStream_t stream) {
    const int64_t n = outer * inner;
    mean_dim1_kernel<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(x, y, outer, R, inner);
}
"""

mean_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void mean_dim1_launch(const float* x, float* y, int64_t outer, int R, int64_t inner, cudaStream_t stream);

torch::Tensor mean_dim1(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 3 && x.scalar_type() == torch::kFloat32, "3-D float32 CUDA tensor");
    auto xc = x.contiguous();
    auto y = torch::empty({xc.size(0), xc.size(2)}, xc.options());
    if (y.numel() == 0) return y;
    mean_dim1_launch(xc.data_ptr<float>(), y.data_ptr<float>(), xc.size(0), (int)xc.size(1), xc.size(2),
                     at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

mean_ext = load_inline(
    name="audit_pub_l1_058_mean_reduction",
    cpp_sources="torch::Tensor mean_dim1(torch::Tensor x);",
    cuda_sources=[mean_kernel_source, mean_wrapper_source],
    functions=["mean_dim1"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        if dim != 1:
            raise ValueError("only dim=1 is implemented")
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mean_ext.mean_dim1(x)
