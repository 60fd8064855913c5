import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

linear_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

// y = x @ W^T + b with x (M, K) and W (N, K), both row-major (nn.Linear's layout).
// Register-blocked SGEMM: a BM x BN tile per block, TM x TN outputs per thread,
// K walked in BK-wide slices staged through shared memory (stored k-major).
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
linear_bias_kernel(const float* __restrict__ X, const float* __restrict__ W, const float* __restrict__ bias,
                   float* __restrict__ Y, int M, int N, int K) {
    constexpr int NUM_THREADS = (BM / TM) * (BN / TN);
    __shared__ float Xs[BK][BM + 1];
    __shared__ float Ws[BK][BN + 1];

    const int tid = threadIdx.x;
    const int tcol = tid % (BN / TN);
    const int trow = tid / (BN / TN);
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;

    float acc[TM][TN];
    #pragma unroll
    for (int i = 0; i < TM; ++i)
        #pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = tid; i < BM * BK; i += NUM_THREADS) {
            const int r = i / BK, c = i % BK;
            const int gm = m0 + r, gk = k0 + c;
            Xs[c][r] = (gm < M && gk < K) ? X[(size_t)gm * K + gk] : 0.0f;
        }
        for (int i = tid; i < BN * BK; i += NUM_THREADS) {
            const int r = i / BK, c = i % BK;
            const int gn = n0 + r, gk = k0 + c;
            Ws[c][r] = (gn < N && gk < K) ? W[(size_t)gn * K + gk] : 0.0f;
        }
        __syncthreads();

        #pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a_frag[TM], b_frag[TN];
            #pragma unroll
            for (int i = 0; i < TM; ++i) a_frag[i] = Xs[kk][trow * TM + i];
            #pragma unroll
            for (int j = 0; j < TN; ++j) b_frag[j] = Ws[kk][tcol * TN + j];
            #pragma unroll
            for (int i = 0; i < TM; ++i)
                #pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a_frag[i], b_frag[j], acc[i][j]);
        }
        __syncthreads();
    }

    #pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int gm = m0 + trow * TM + i;
        if (gm >= M) continue;
        #pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int gn = n0 + tcol * TN + j;
            if (gn < N) Y[(size_t)gm * N + gn] = acc[i][j] + bias[gn];
        }
    }
}

torch::Tensor linear_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "all tensors must be on CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1), "shape mismatch");
    TORCH_CHECK(bias.numel() == weight.size(0), "bias size mismatch");
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    auto bc = bias.contiguous();
    const int M = xc.size(0), K = xc.size(1), N = wc.size(0);
    auto y = torch::empty({M, N}, xc.options());
    if (y.numel() == 0) return y;

    constexpr int BM = 64, BN = 64, BK = 16, TM = 4, TN = 4;
    dim3 block((BM / TM) * (BN / TN));
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    linear_bias_kernel<BM, BN, BK, TM, TN><<<grid, block, 0, stream>>>(
        xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(), M, N, K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

linear_cpp = "torch::Tensor linear_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

linear_ext = load_inline(
    name="kbcorpus_l1_linear_regtile",
    cpp_sources=linear_cpp,
    cuda_sources=linear_source,
    functions=["linear_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        # Same layer, same construction order as the reference: identical weights under the same seed.
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear_ext.linear_forward(x, self.linear.weight, self.linear.bias)
