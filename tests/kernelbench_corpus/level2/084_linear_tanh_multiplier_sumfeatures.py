import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ROWSUM_THREADS = 256

src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cub/cub.cuh>

// Stage 1: t = tanh(x @ W^T + b) * multiplier, register-tiled GEMM (8 x 8 outputs per thread).
template <int BM, int BN, int BK, int TM, int TN>
__global__ void linear_tanh_mul_kernel(const float* __restrict__ X, const float* __restrict__ W,
                                       const float* __restrict__ bias, const float* __restrict__ mult,
                                       float* __restrict__ T, int M, int N, int K) {
    constexpr int NTHR = (BM / TM) * (BN / TN);
    __shared__ float sX[BK][BM + 4];
    __shared__ float sW[BK][BN + 4];
    const int tid = threadIdx.x;
    const int tcol = tid % (BN / TN), trow = tid / (BN / TN);
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    float acc[TM][TN];
    #pragma unroll
    for (int i = 0; i < TM; i++)
        #pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = tid; e < BM * BK; e += NTHR) {
            int r = e / BK, c = e % BK;
            sX[c][r] = (bm + r < M && k0 + c < K) ? X[(size_t)(bm + r) * K + (k0 + c)] : 0.0f;
        }
        for (int e = tid; e < BN * BK; e += NTHR) {
            int r = e / BK, c = e % BK;
            sW[c][r] = (bn + r < N && k0 + c < K) ? W[(size_t)(bn + r) * K + (k0 + c)] : 0.0f;
        }
        __syncthreads();
        #pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            float a[TM], b[TN];
            #pragma unroll
            for (int i = 0; i < TM; i++) a[i] = sX[kk][trow + i * (BM / TM)];
            #pragma unroll
            for (int j = 0; j < TN; j++) b[j] = sW[kk][tcol + j * (BN / TN)];
            #pragma unroll
            for (int i = 0; i < TM; i++)
                #pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < TM; i++) {
        const int m = bm + trow + i * (BM / TM);
        #pragma unroll
        for (int j = 0; j < TN; j++) {
            const int n = bn + tcol + j * (BN / TN);
            if (m < M && n < N) T[(size_t)m * N + n] = tanhf(acc[i][j] + bias[n]) * mult[n];
        }
    }
}

// Stage 2: out[m] = sum_n t[m][n], one block per row, cub::BlockReduce.
template <int THREADS>
__global__ void row_sum_kernel(const float* __restrict__ T, float* __restrict__ out, int N) {
    using Reduce = cub::BlockReduce<float, THREADS>;
    __shared__ typename Reduce::TempStorage storage;
    const float* row = T + (size_t)blockIdx.x * N;
    float s = 0.0f;
    for (int n = threadIdx.x; n < N; n += THREADS) s += row[n];
    const float total = Reduce(storage).Sum(s);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

torch::Tensor linear_tanh_mul_sum(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor mult,
                                  int64_t rowsum_threads) {
    TORCH_CHECK(x.is_cuda() && w.is_cuda() && b.is_cuda() && mult.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(rowsum_threads == 256, "row_sum_kernel is instantiated for 256 threads");
    auto xc = x.contiguous(), wc = w.contiguous(), bc = b.contiguous(), mc = mult.contiguous();
    const int M = xc.size(0), K = xc.size(1), N = wc.size(0);
    TORCH_CHECK(mc.numel() == N, "multiplier must have out_features elements");
    auto t = torch::empty({M, N}, xc.options());
    auto out = torch::empty({M, 1}, xc.options());
    auto stream = at::cuda::getCurrentCUDAStream();
    constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    linear_tanh_mul_kernel<BM, BN, BK, TM, TN><<<grid, (BM / TM) * (BN / TN), 0, stream>>>(
        xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), mc.data_ptr<float>(), t.data_ptr<float>(),
        M, N, K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    row_sum_kernel<256><<<M, 256, 0, stream>>>(t.data_ptr<float>(), out.data_ptr<float>(), N);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp = (
    "torch::Tensor linear_tanh_mul_sum(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor mult, "
    "int64_t rowsum_threads);"
)

module = load_inline(
    name="kbcorpus_l2_linear_tanh_multiplier_sum",
    cpp_sources=cpp,
    cuda_sources=src,
    functions=["linear_tanh_mul_sum"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier_shape):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.multiplier = nn.Parameter(1.0 + 0.1 * torch.randn(multiplier_shape))

    def forward(self, x):
        return module.linear_tanh_mul_sum(x, self.linear.weight, self.linear.bias, self.multiplier, ROWSUM_THREADS)
