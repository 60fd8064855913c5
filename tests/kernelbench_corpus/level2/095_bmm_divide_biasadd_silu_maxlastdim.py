import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_code = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

namespace kb {

constexpr int BM = 64;
constexpr int BN = 64;
constexpr int BK = 16;
constexpr int TM = 4;
constexpr int TN = 4;
constexpr int THREADS = (BM / TM) * (BN / TN);

// Per batch: y = silu(A @ B / divisor + bias[n]); partial[b][m][tile] = max over the tile's BN columns.
__global__ void __launch_bounds__(THREADS)
bmm_silu_tile_max(const float* __restrict__ A, const float* __restrict__ B, const float* __restrict__ bias,
                  float* __restrict__ partial, int M, int N, int K, float divisor) {
    __shared__ float As[BK][BM + 1];
    __shared__ float Bs[BK][BN];
    __shared__ float row_max[BM][BN / TN + 1];

    const int batch = blockIdx.z;
    const float* Ab = A + (size_t)batch * M * K;
    const float* Bb = B + (size_t)batch * K * N;
    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN), ty = tid / (BN / TN);
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = tid; e < BM * BK; e += THREADS) {      // A tile: row-major (m, k) -> As[k][m]
            const int r = e / BK, c = e % BK;
            As[c][r] = (m0 + r < M && k0 + c < K) ? Ab[(size_t)(m0 + r) * K + k0 + c] : 0.f;
        }
        for (int e = tid; e < BK * BN; e += THREADS) {      // B tile: row-major (k, n), copied as is
            const int r = e / BN, c = e % BN;
            Bs[r][c] = (k0 + r < K && n0 + c < N) ? Bb[(size_t)(k0 + r) * N + n0 + c] : 0.f;
        }
        __syncthreads();
        #pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a[TM], b[TN];
            #pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[kk][ty * TM + i];
            #pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tx * TN + j];
            #pragma unroll
            for (int i = 0; i < TM; ++i)
                #pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }

    #pragma unroll
    for (int i = 0; i < TM; ++i) {
        float mx = -INFINITY;
        #pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int n = n0 + tx * TN + j;
            if (n < N) {
                const float v = acc[i][j] / divisor + bias[n];
                mx = fmaxf(mx, v / (1.f + expf(-v)));
            }
        }
        row_max[ty * TM + i][tx] = mx;
    }
    __syncthreads();
    const int n_tiles = gridDim.x;
    for (int r = tid; r < BM; r += THREADS) {
        if (m0 + r >= M) continue;
        float mx = -INFINITY;
        for (int t = 0; t < BN / TN; ++t) mx = fmaxf(mx, row_max[r][t]);
        partial[((size_t)batch * M + m0 + r) * n_tiles + blockIdx.x] = mx;
    }
}

__global__ void reduce_partial_max(const float* __restrict__ partial, float* __restrict__ out, int64_t rows,
                                   int n_tiles) {
    const int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float mx = -INFINITY;
    for (int t = 0; t < n_tiles; ++t) mx = fmaxf(mx, partial[row * n_tiles + t]);
    out[row] = mx;
}

}  // namespace kb

torch::Tensor bmm_divide_bias_silu_max(torch::Tensor a, torch::Tensor b, torch::Tensor bias, double divisor) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda() && bias.is_cuda(), "CUDA tensors required");
    TORCH_CHECK(a.dim() == 3 && b.dim() == 3 && a.size(2) == b.size(1) && a.size(0) == b.size(0), "bmm shapes");
    TORCH_CHECK(a.size(0) <= 65535, "batch too large for gridDim.z");
    auto A = a.contiguous(), B = b.contiguous(), bi = bias.contiguous();
    const int batch = A.size(0), M = A.size(1), K = A.size(2), N = B.size(2);
    TORCH_CHECK(bi.numel() == N, "bias must have n elements");
    const int n_tiles = (N + kb::BN - 1) / kb::BN;
    auto partial = torch::empty({batch, M, n_tiles}, A.options());
    auto out = torch::empty({batch, M, 1}, A.options());
    auto stream = at::cuda::getCurrentCUDAStream();
    dim3 grid(n_tiles, (M + kb::BM - 1) / kb::BM, batch);
    kb::bmm_silu_tile_max<<<grid, kb::THREADS, 0, stream>>>(A.data_ptr<float>(), B.data_ptr<float>(),
                                                           bi.data_ptr<float>(), partial.data_ptr<float>(), M, N, K,
                                                           (float)divisor);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    const int64_t rows = (int64_t)batch * M;
    kb::reduce_partial_max<<<(unsigned)((rows + 255) / 256), 256, 0, stream>>>(partial.data_ptr<float>(),
                                                                              out.data_ptr<float>(), rows, n_tiles);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_code = "torch::Tensor bmm_divide_bias_silu_max(torch::Tensor a, torch::Tensor b, torch::Tensor bias, double divisor);"

bmm_silu_max = load_inline(
    name="kbcorpus_l2_bmm_divide_bias_silu_max",
    cpp_sources=cpp_code,
    cuda_sources=cuda_code,
    functions=["bmm_divide_bias_silu_max"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, divisor, bias_shape):
        super().__init__()
        self.divisor = divisor
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, a, b):
        return bmm_silu_max.bmm_divide_bias_silu_max(a, b, self.bias, self.divisor)
