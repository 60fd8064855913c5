import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

argmax_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define COLS_PER_BLOCK 32
#define SPLIT 8

// argmax over the middle dimension of x viewed as (outer, R, inner).
// Block (32, SPLIT): x-threads take consecutive inner columns, y-threads split R;
// ties keep the smallest index, like torch.argmax.
__global__ void argmax_dim1_kernel(const float* __restrict__ x, int64_t* __restrict__ out,
                                   int R, int inner) {
    __shared__ float best_val[SPLIT][COLS_PER_BLOCK];
    __shared__ int best_idx[SPLIT][COLS_PER_BLOCK];

    int col = blockIdx.x * COLS_PER_BLOCK + threadIdx.x;
    long long o = blockIdx.y;
    float bv = -INFINITY;
    int bi = 0x7fffffff;
    if (col < inner) {
        const float* base = x + o * (long long)R * inner + col;
        for (int r = threadIdx.y; r < R; r += SPLIT) {
            float v = base[(long long)r * inner];
            if (v > bv || bi == 0x7fffffff) { bv = v; bi = r; }
        }
    }
    best_val[threadIdx.y][threadIdx.x] = bv;
    best_idx[threadIdx.y][threadIdx.x] = bi;
    __syncthreads();

    if (threadIdx.y == 0 && col < inner) {
        for (int s = 1; s < SPLIT; ++s) {
            float v = best_val[s][threadIdx.x];
            int i = best_idx[s][threadIdx.x];
            if (i == 0x7fffffff) continue;
            if (v > bv || (v == bv && i < bi)) { bv = v; bi = i; }
        }
        out[o * inner + col] = bi;
    }
}

torch::Tensor argmax_dim1(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be on the GPU");
    TORCH_CHECK(x.dim() == 3, "x must be 3-D");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    x = x.contiguous();
    int outer = x.size(0), R = x.size(1), inner = x.size(2);
    TORCH_CHECK(R > 0, "cannot take argmax over an empty dimension");
    TORCH_CHECK(outer <= 65535, "outer too large");
    auto out = torch::empty({outer, inner}, x.options().dtype(torch::kInt64));
    if (out.numel() == 0) return out;
    dim3 block(COLS_PER_BLOCK, SPLIT);
    dim3 grid((inner + COLS_PER_BLOCK - 1) / COLS_PER_BLOCK, outer);
    argmax_dim1_kernel<<<grid, block>>>(x.data_ptr<float>(), out.data_ptr<int64_t>(), R, inner);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "argmax_dim1_kernel: ", cudaGetErrorString(err));
    return out;
}
"""

argmax_cpp_source = "torch::Tensor argmax_dim1(torch::Tensor x);"

argmax_module = load_inline(
    name="kbcorpus_l1_argmax_dim1",
    cpp_sources=argmax_cpp_source,
    cuda_sources=argmax_cuda_source,
    functions=["argmax_dim1"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        if dim != 1:
            raise ValueError("only dim=1 of a 3-D tensor is implemented")

    def forward(self, x):
        return argmax_module.argmax_dim1(x)
