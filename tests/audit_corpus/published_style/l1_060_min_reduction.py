# Published-style solution for tasks/level1/060_min_reduction.py (min over dim 0 of (512, 512, 512)):
# one thread per output column, coalesced; called inside try/except with a torch.min fallback that
# never runs for the task's float32 CUDA input. Expected: strict REJECTED, kernelbench REJECTED
# (try/except), observe OK (no fallback ran).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

min_kernel_source = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__global__ void min_dim0_kernel(const float* __restrict__ x, float* __restrict__ y, int R, int64_t inner) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= inner) return;
    float m = x[i];
    for (int r = 1; r < R; ++r) m = fminf(m, x[(int64_t)r * inner + i]);
    y[i] = m;
}

void min_dim0_launch(const float* x, float* y, int R, int64_t inner, cudaStream_t stream) {
    min_dim0_kernel<<<(unsigned)((inner + 255) / 256), 256, 0, stream>>>(x, y, R, inner);
}
"""

min_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void min_dim0_launch(const float* x, float* y, int R, int64_t inner, cudaStream_t stream);

torch::Tensor min_dim0(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() >= 2 && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor");
    TORCH_CHECK(x.size(0) > 0, "empty reduction");
    auto xc = x.contiguous();
    auto y = torch::empty(xc.sizes().slice(1), xc.options());
    if (y.numel() == 0) return y;
    min_dim0_launch(xc.data_ptr<float>(), y.data_ptr<float>(), (int)xc.size(0), y.numel(),
                    at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

min_ext = load_inline(
    name="audit_pub_l1_060_min_reduction",
    cpp_sources="torch::Tensor min_dim0(torch::Tensor x);",
    cuda_sources=[min_kernel_source, min_wrapper_source],
    functions=["min_dim0"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.dim == 0:
            try:
                return min_ext.min_dim0(x)
            except Exception as e:
                print(f"custom min kernel failed ({e}), falling back to torch.min")
        return torch.min(x, dim=self.dim)[0]
