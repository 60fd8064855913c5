import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Fused: y = tanh(mish(x @ W^T + b_linear + bias)) * scale
source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#define BLOCK_M 64
#define BLOCK_N 64
#define BLOCK_K 16
#define THREAD_M 4
#define THREAD_N 4

__device__ __forceinline__ float softplus_f(float v) {
    // PyTorch's mish uses softplus with threshold 20: beyond it softplus(v) == v.
    return v > 20.0f ? v : log1pf(expf(v));
}

__device__ __forceinline__ float epilogue(float v, float scale) {
    float m = v * tanhf(softplus_f(v));   // mish
    return tanhf(m) * scale;
}

__global__ void linear_mish_tanh_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                        const float* __restrict__ b_lin, const float* __restrict__ b_extra,
                                        float* __restrict__ y, int M, int N, int K, float scale) {
    __shared__ float tile_x[BLOCK_K][BLOCK_M + 1];
    __shared__ float tile_w[BLOCK_K][BLOCK_N + 1];

    int tid = threadIdx.x;
    int tn = tid % (BLOCK_N / THREAD_N);
    int tm = tid / (BLOCK_N / THREAD_N);
    int row0 = blockIdx.y * BLOCK_M;
    int col0 = blockIdx.x * BLOCK_N;

    float acc[THREAD_M][THREAD_N] = {{0.0f}};

    for (int k0 = 0; k0 < K; k0 += BLOCK_K) {
        for (int e = tid; e < BLOCK_M * BLOCK_K; e += blockDim.x) {
            int r = e / BLOCK_K;
            int c = e % BLOCK_K;
            int gr = row0 + r, gc = k0 + c;
            tile_x[c][r] = (gr < M && gc < K) ? x[(long long)gr * K + gc] : 0.0f;
        }
        for (int e = tid; e < BLOCK_N * BLOCK_K; e += blockDim.x) {
            int r = e / BLOCK_K;
            int c = e % BLOCK_K;
            int gr = col0 + r, gc = k0 + c;
            tile_w[c][r] = (gr < N && gc < K) ? w[(long long)gr * K + gc] : 0.0f;
        }
        __syncthreads();

        for (int kk = 0; kk < BLOCK_K; kk++) {
            float av[THREAD_M], bv[THREAD_N];
            for (int i = 0; i < THREAD_M; i++) av[i] = tile_x[kk][tm * THREAD_M + i];
            for (int j = 0; j < THREAD_N; j++) bv[j] = tile_w[kk][tn * THREAD_N + j];
            for (int i = 0; i < THREAD_M; i++)
                for (int j = 0; j < THREAD_N; j++) acc[i][j] += av[i] * bv[j];
        }
        __syncthreads();
    }

    for (int i = 0; i < THREAD_M; i++) {
        int r = row0 + tm * THREAD_M + i;
        if (r >= M) continue;
        for (int j = 0; j < THREAD_N; j++) {
            int c = col0 + tn * THREAD_N + j;
            if (c >= N) continue;
            float v = acc[i][j] + b_lin[c] + b_extra[c];
            y[(long long)r * N + c] = epilogue(v, scale);
        }
    }
}

torch::Tensor linear_mish_tanh(torch::Tensor x, torch::Tensor w, torch::Tensor b_lin, torch::Tensor b_extra,
                               double scale) {
    TORCH_CHECK(x.is_cuda(), "x must be CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "x must be float32");
    x = x.contiguous();
    w = w.contiguous();
    b_lin = b_lin.contiguous();
    b_extra = b_extra.contiguous();
    int M = x.size(0), K = x.size(1), N = w.size(0);
    auto y = torch::empty({M, N}, x.options());
    dim3 grid((N + BLOCK_N - 1) / BLOCK_N, (M + BLOCK_M - 1) / BLOCK_M);
    dim3 block((BLOCK_M / THREAD_M) * (BLOCK_N / THREAD_N));
    linear_mish_tanh_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), b_lin.data_ptr<float>(), b_extra.data_ptr<float>(),
        y.data_ptr<float>(), M, N, K, (float)scale);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "linear_mish_tanh_kernel failed: ", cudaGetErrorString(err));
    return y;
}
"""

cpp_source = (
    "torch::Tensor linear_mish_tanh(torch::Tensor x, torch::Tensor w, torch::Tensor b_lin, torch::Tensor b_extra, "
    "double scale);"
)

linear_mish_tanh = load_inline(
    name="kbcorpus_l2_linear_biasadd_mish_tanh",
    cpp_sources=cpp_source,
    cuda_sources=source,
    functions=["linear_mish_tanh"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)
        self.scale_factor = scale_factor

    def forward(self, x):
        return linear_mish_tanh.linear_mish_tanh(x, self.linear.weight, self.linear.bias, self.bias, self.scale_factor)
