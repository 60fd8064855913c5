import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

sum_reduce_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

// x is viewed as (outer, reduce, inner); out is (outer, inner).
// Block = (32, ROWS): threadIdx.x walks 32 consecutive inner columns (coalesced),
// threadIdx.y splits the reduced dimension; partial sums meet in shared memory.
template <int ROWS>
__global__ void sum_middle_dim_kernel(const float* __restrict__ x, float* __restrict__ out,
                                      int64_t reduce, int64_t inner) {
    __shared__ float partial[ROWS][33];
    const int64_t o = blockIdx.y;
    const int64_t col = (int64_t)blockIdx.x * 32 + threadIdx.x;
    float acc = 0.0f;
    if (col < inner) {
        const float* base = x + o * reduce * inner + col;
        for (int64_t r = threadIdx.y; r < reduce; r += ROWS) {
            acc += base[r * inner];
        }
    }
    partial[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < inner) {
        float total = 0.0f;
        #pragma unroll
        for (int r = 0; r < ROWS; ++r) total += partial[r][threadIdx.x];
        out[o * inner + col] = total;
    }
}

torch::Tensor sum_middle_dim(torch::Tensor x, int64_t outer, int64_t reduce, int64_t inner) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    TORCH_CHECK(x.numel() == outer * reduce * inner, "shape does not match outer*reduce*inner");
    TORCH_CHECK(outer <= 65535, "outer dimension too large for gridDim.y");
    auto xc = x.contiguous();
    auto out = torch::empty({outer, inner}, xc.options());
    if (out.numel() == 0) return out;
    constexpr int ROWS = 16;
    dim3 block(32, ROWS);
    dim3 grid((unsigned)((inner + 31) / 32), (unsigned)outer);
    sum_middle_dim_kernel<ROWS><<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), out.data_ptr<float>(), reduce, inner);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

sum_reduce_cpp = "torch::Tensor sum_middle_dim(torch::Tensor x, int64_t outer, int64_t reduce, int64_t inner);"

sum_reduce = load_inline(
    name="kbcorpus_l1_sum_middle_dim",
    cpp_sources=sum_reduce_cpp,
    cuda_sources=sum_reduce_source,
    functions=["sum_middle_dim"],
    verbose=False,
)


class ModelNew(nn.Module):
    """torch.sum(x, dim, keepdim=True) with a custom column-reduction kernel."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = list(x.shape)
        d = self.dim % len(shape)
        outer = 1
        for s in shape[:d]:
            outer *= s
        inner = 1
        for s in shape[d + 1:]:
            inner *= s
        out = sum_reduce.sum_middle_dim(x, outer, shape[d], inner)
        shape[d] = 1
        return out.view(shape)
