import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

max_reduce_source = r"""
#include <torch/extension.h>
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cfloat>
#include <limits>

template <typename scalar_t>
__device__ __forceinline__ scalar_t warp_max(scalar_t v) {
    #pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        scalar_t other = __shfl_down_sync(0xffffffff, v, offset);
        v = other > v ? other : v;
    }
    return v;
}

// Reduces the innermost dimension: one warp per row, lanes stride over the row.
template <typename scalar_t>
__global__ void max_lastdim_kernel(const scalar_t* __restrict__ in, scalar_t* __restrict__ out,
                                   int64_t rows, int64_t len) {
    const int64_t warps_per_block = blockDim.x / 32;
    const int64_t row = blockIdx.x * warps_per_block + threadIdx.x / 32;
    const int lane = threadIdx.x & 31;
    if (row >= rows) return;
    const scalar_t* p = in + row * len;
    scalar_t m = -std::numeric_limits<scalar_t>::infinity();
    for (int64_t i = lane; i < len; i += 32) {
        scalar_t v = p[i];
        m = v > m ? v : m;
    }
    m = warp_max<scalar_t>(m);
    if (lane == 0) out[row] = m;
}

torch::Tensor max_lastdim(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    auto xc = x.contiguous();
    const int64_t len = xc.size(-1);
    TORCH_CHECK(len > 0, "cannot reduce an empty dimension");
    const int64_t rows = xc.numel() / len;
    auto out_sizes = xc.sizes().vec();
    out_sizes.pop_back();
    auto out = torch::empty(out_sizes, xc.options());
    if (rows == 0) return out;
    const int threads = 256;
    const int64_t blocks = (rows + threads / 32 - 1) / (threads / 32);
    AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "max_lastdim", [&] {
        max_lastdim_kernel<scalar_t><<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
            xc.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), rows, len);
    });
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

max_reduce_cpp = "torch::Tensor max_lastdim(torch::Tensor x);"

max_reduce = load_inline(
    name="kbcorpus_l1_max_lastdim_warp",
    cpp_sources=max_reduce_cpp,
    cuda_sources=max_reduce_source,
    functions=["max_lastdim"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = self.dim % x.dim()
        if d != x.dim() - 1:
            raise ValueError("this kernel reduces the last dimension only")
        return max_reduce.max_lastdim(x)
