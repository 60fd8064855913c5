import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

TILE_SIZE = 32

kernel_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

// Fused Linear + divide + tanh + scale.
// Each 32x32 thread block computes one 32x32 tile of y = tanh((x @ W^T + b) / divisor) * scale.
template <int TILE>
__global__ void fused_linear_tanh_kernel(const float* __restrict__ x, const float* __restrict__ W,
                                         const float* __restrict__ b, float* __restrict__ y,
                                         int batch, int in_f, int out_f, float divisor, float scale) {
    __shared__ float x_tile[TILE][TILE + 1];
    __shared__ float w_tile[TILE][TILE + 1];

    const int r = blockIdx.y * TILE + threadIdx.y;        // batch row handled by this thread
    const int c = blockIdx.x * TILE + threadIdx.x;        // output feature handled by this thread
    const int w_row = blockIdx.x * TILE + threadIdx.y;    // feature row of W loaded by this thread

    float acc = 0.0f;
    for (int k0 = 0; k0 < in_f; k0 += TILE) {
        const int k = k0 + threadIdx.x;
        x_tile[threadIdx.y][threadIdx.x] = (r < batch && k < in_f) ? x[(size_t)r * in_f + k] : 0.0f;
        w_tile[threadIdx.y][threadIdx.x] = (w_row < out_f && k < in_f) ? W[(size_t)w_row * in_f + k] : 0.0f;
        __syncthreads();
        #pragma unroll
        for (int kk = 0; kk < TILE; ++kk) acc += x_tile[threadIdx.y][kk] * w_tile[threadIdx.x][kk];
        __syncthreads();
    }

    if (r < batch && c < out_f) {
        float v = (acc + b[c]) / divisor;
        y[(size_t)r * out_f + c] = tanhf(v) * scale;
    }
}

torch::Tensor fused_linear_tanh(torch::Tensor x, torch::Tensor W, torch::Tensor b, double divisor, double scale,
                                int64_t tile) {
    TORCH_CHECK(x.is_cuda() && W.is_cuda() && b.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(tile == 32, "this build instantiates TILE = 32 only");
    x = x.contiguous();
    W = W.contiguous();
    b = b.contiguous();
    const int batch = x.size(0), in_f = x.size(1), out_f = W.size(0);
    auto y = torch::empty({batch, out_f}, x.options());
    dim3 block(32, 32);
    dim3 grid((out_f + 31) / 32, (batch + 31) / 32);
    fused_linear_tanh_kernel<32><<<grid, block>>>(x.data_ptr<float>(), W.data_ptr<float>(), b.data_ptr<float>(),
                                                  y.data_ptr<float>(), batch, in_f, out_f, (float)divisor,
                                                  (float)scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = (
    "torch::Tensor fused_linear_tanh(torch::Tensor x, torch::Tensor W, torch::Tensor b, double divisor, "
    "double scale, int64_t tile);"
)

fused_linear_tanh = load_inline(
    name="kbcorpus_l2_linear_divide_tanh_scale",
    cpp_sources=cpp_source,
    cuda_sources=kernel_source,
    functions=["fused_linear_tanh"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, divisor, scale_factor):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor
        self.scale_factor = scale_factor

    def forward(self, x):
        return fused_linear_tanh.fused_linear_tanh(
            x, self.linear.weight, self.linear.bias, self.divisor, self.scale_factor, TILE_SIZE
        )
