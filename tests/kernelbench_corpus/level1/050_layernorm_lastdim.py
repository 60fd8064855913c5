import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

layernorm_cuda = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cub/block/block_reduce.cuh>

// One block per row. The row is cached in registers (ITEMS values per thread), so global
// memory is read once; mean and variance use two block reductions (two-pass, no E[x^2]-E[x]^2).
template <int BLOCK, int ITEMS>
__global__ void layernorm_row_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                                     const float* __restrict__ beta, float* __restrict__ y,
                                     int cols, float eps) {
    typedef cub::BlockReduce<float, BLOCK> Reduce;
    __shared__ typename Reduce::TempStorage tmp;
    __shared__ float mean_sh, rstd_sh;

    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;

    float vals[ITEMS];
    float local = 0.f;
    #pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const int c = threadIdx.x + i * BLOCK;
        vals[i] = c < cols ? xr[c] : 0.f;
        local += vals[i];
    }
    float total = Reduce(tmp).Sum(local);
    if (threadIdx.x == 0) mean_sh = total / cols;
    __syncthreads();
    const float mean = mean_sh;

    float local_var = 0.f;
    #pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const int c = threadIdx.x + i * BLOCK;
        const float d = vals[i] - mean;
        if (c < cols) local_var += d * d;
    }
    float var_sum = Reduce(tmp).Sum(local_var);
    if (threadIdx.x == 0) rstd_sh = rsqrtf(var_sum / cols + eps);
    __syncthreads();
    const float rstd = rstd_sh;

    #pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const int c = threadIdx.x + i * BLOCK;
        if (c < cols) yr[c] = (vals[i] - mean) * rstd * gamma[c] + beta[c];
    }
}

torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps) {
    TORCH_CHECK(x.is_cuda() && gamma.is_cuda() && beta.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 expected");
    const int cols = x.size(-1);
    TORCH_CHECK(gamma.numel() == cols && beta.numel() == cols, "normalized_shape mismatch");
    constexpr int BLOCK = 512, ITEMS = 32;
    TORCH_CHECK(cols <= BLOCK * ITEMS, "rows longer than ", BLOCK * ITEMS, " are not supported");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t rows = xc.numel() / cols;
    if (rows == 0) return y;
    layernorm_row_kernel<BLOCK, ITEMS><<<(unsigned)rows, BLOCK, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), gamma.contiguous().data_ptr<float>(), beta.contiguous().data_ptr<float>(),
        y.data_ptr<float>(), cols, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

layernorm_decl = "torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps);"

layernorm_ext = load_inline(
    name="kbcorpus_l1_layernorm_cub",
    cpp_sources=layernorm_decl,
    cuda_sources=layernorm_cuda,
    functions=["layernorm_forward"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return layernorm_ext.layernorm_forward(x, self.ln.weight, self.ln.bias, self.ln.eps)
