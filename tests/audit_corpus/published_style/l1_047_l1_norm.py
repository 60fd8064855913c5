# Published-style solution for tasks/level1/047_l1_norm.py (x (8192, 16384) float32): one block per
# row, per-thread partial sums of |x|, warp shuffles then shared memory, then x / mean(|x|).
# Expected: strict OK, kernelbench OK.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

l1norm_kernel_source = r"""
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void l1_norm_rows_kernel(const float* __restrict__ x, float* __restrict__ y, int D) {
    __shared__ float warp_sums[32];
    __shared__ float row_mean;
    const float* xr = x + (int64_t)blockIdx.x * D;
    float* yr = y + (int64_t)blockIdx.x * D;
    float s = 0.0f;
    for (int i = threadIdx.x; i < D; i += blockDim.x) s += fabsf(xr[i]);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = s;
    __syncthreads();
    if (warp == 0) {
        s = lane < (int)(blockDim.x >> 5) ? warp_sums[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
        if (lane == 0) row_mean = s / (float)D;
    }
    __syncthreads();
    const float m = row_mean;
    for (int i = threadIdx.x; i < D; i += blockDim.x) yr[i] = xr[i] / m;
}

void l1_norm_rows_launch(const float* x, float* y, int rows, int D, cudaStream_t stream) {
    l1_norm_rows_kernel<<<rows, 512, 0, stream>>>(x, y, D);
}
"""

l1norm_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

void l1_norm_rows_launch(const float* x, float* y, int rows, int D, cudaStream_t stream);

torch::Tensor l1_norm(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.scalar_type() == torch::kFloat32, "2-D float32 CUDA tensor");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;
    l1_norm_rows_launch(xc.data_ptr<float>(), y.data_ptr<float>(), (int)xc.size(0), (int)xc.size(1),
                        at::cuda::getCurrentCUDAStream());
    return y;
}
"""

l1norm = load_inline(
    name="audit_pub_l1_047_l1_norm",
    cpp_sources="torch::Tensor l1_norm(torch::Tensor x);",
    cuda_sources=[l1norm_kernel_source, l1norm_wrapper_source],
    functions=["l1_norm"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return l1norm.l1_norm(x)
