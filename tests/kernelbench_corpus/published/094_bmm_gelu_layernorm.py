import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# torch.bmm stays in PyTorch (cuBLAS batched GEMM). GELU + LayerNorm(n) is one kernel: one block
# per output row with exactly one float4 per thread (blockDim = n / 4), warp-shuffle reductions,
# mean and centred variance from registers.
bmm_epilogue_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__device__ __forceinline__ float gelu_exact(float v) {
    return 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
}

__device__ __forceinline__ float block_allsum(float v, float* scratch) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int n_warps = blockDim.x >> 5;
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float t = 0.0f;
    for (int w = 0; w < n_warps; ++w) t += scratch[w];   // every thread sums the same partials in order
    __syncthreads();
    return t;
}

__global__ void gelu_layernorm_row_kernel(const float4* __restrict__ x, const float4* __restrict__ gamma,
                                          const float4* __restrict__ beta, float4* __restrict__ y, float inv_n,
                                          float eps) {
    __shared__ float scratch[32];
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    float4 v = x[i];
    v.x = gelu_exact(v.x);
    v.y = gelu_exact(v.y);
    v.z = gelu_exact(v.z);
    v.w = gelu_exact(v.w);
    const float mean = block_allsum((v.x + v.y) + (v.z + v.w), scratch) * inv_n;
    const float dx = v.x - mean, dy = v.y - mean, dz = v.z - mean, dw = v.w - mean;
    const float var = block_allsum((dx * dx + dy * dy) + (dz * dz + dw * dw), scratch) * inv_n;
    const float rstd = rsqrtf(var + eps);
    const float4 g = gamma[threadIdx.x];
    const float4 b = beta[threadIdx.x];
    y[i] = make_float4(dx * rstd * g.x + b.x, dy * rstd * g.y + b.y, dz * rstd * g.z + b.z, dw * rstd * g.w + b.w);
}

torch::Tensor bmm_gelu_layernorm_epilogue(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be float32 on CUDA");
    x = x.contiguous();
    gamma = gamma.contiguous();
    beta = beta.contiguous();
    const int64_t n = x.size(-1);
    const int64_t rows = x.numel() / n;
    TORCH_CHECK(n % 128 == 0 && n / 4 <= 1024, "row length must be a multiple of 128 and at most 4096");
    TORCH_CHECK(gamma.numel() == n && beta.numel() == n, "LayerNorm parameters must match the row");
    auto y = torch::empty_like(x);
    const int threads = (int)(n / 4);
    gelu_layernorm_row_kernel<<<(unsigned)rows, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const float4*>(x.data_ptr<float>()), reinterpret_cast<const float4*>(gamma.data_ptr<float>()),
        reinterpret_cast<const float4*>(beta.data_ptr<float>()), reinterpret_cast<float4*>(y.data_ptr<float>()),
        1.0f / (float)n, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

bmm_epilogue_cpp = (
    "torch::Tensor bmm_gelu_layernorm_epilogue(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps);"
)

bmm_epilogue = load_inline(
    name="kb_published_l2_094_bmm_gelu_layernorm",
    cpp_sources=bmm_epilogue_cpp,
    cuda_sources=bmm_epilogue_source,
    functions=["bmm_gelu_layernorm_epilogue"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, a, b):
        x = torch.bmm(a, b)
        return bmm_epilogue.bmm_gelu_layernorm_epilogue(x, self.ln.weight, self.ln.bias, self.ln.eps)
