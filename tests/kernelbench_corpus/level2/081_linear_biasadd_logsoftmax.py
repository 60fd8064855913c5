import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_sources = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#define CHECK_CUDA(x) TORCH_CHECK((x).is_cuda(), #x " must be a CUDA tensor")
#define CHECK_FLOAT(x) TORCH_CHECK((x).scalar_type() == at::kFloat, #x " must be float32")

// ---- GEMM: h = x @ W^T + b_linear + b_extra -------------------------------------------------
template <int BM, int BN, int BK>
__global__ void gemm_two_bias_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                     const float* __restrict__ b1, const float* __restrict__ b2,
                                     float* __restrict__ h, int M, int N, int K) {
    // 16 x 16 threads, each computing a (BM/16) x (BN/16) patch.
    constexpr int RM = BM / 16, RN = BN / 16;
    __shared__ float xs[BK][BM + 1];
    __shared__ float ws[BK][BN + 1];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    float acc[RM][RN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = tid; e < BM * BK; e += 256) {
            int r = e / BK, kk = e % BK;
            xs[kk][r] = (m0 + r < M && k0 + kk < K) ? x[(size_t)(m0 + r) * K + k0 + kk] : 0.f;
        }
        for (int e = tid; e < BN * BK; e += 256) {
            int r = e / BK, kk = e % BK;
            ws[kk][r] = (n0 + r < N && k0 + kk < K) ? w[(size_t)(n0 + r) * K + k0 + kk] : 0.f;
        }
        __syncthreads();
        for (int kk = 0; kk < BK; ++kk) {
            float a[RM], bb[RN];
            for (int i = 0; i < RM; ++i) a[i] = xs[kk][ty + 16 * i];
            for (int j = 0; j < RN; ++j) bb[j] = ws[kk][tx + 16 * j];
            for (int i = 0; i < RM; ++i)
                for (int j = 0; j < RN; ++j) acc[i][j] += a[i] * bb[j];
        }
        __syncthreads();
    }
    for (int i = 0; i < RM; ++i) {
        const int m = m0 + ty + 16 * i;
        for (int j = 0; j < RN; ++j) {
            const int n = n0 + tx + 16 * j;
            if (m < M && n < N) h[(size_t)m * N + n] = (acc[i][j] + b1[n]) + b2[n];
        }
    }
}

// ---- log-softmax over rows, one warp per row, in place ------------------------------------
__global__ void log_softmax_warp_kernel(float* __restrict__ h, int M, int N) {
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= M) return;
    float* p = h + (size_t)row * N;
    float mx = -INFINITY;
    for (int i = lane; i < N; i += 32) mx = fmaxf(mx, p[i]);
    for (int o = 16; o > 0; o /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffff, mx, o));
    float s = 0.f;
    for (int i = lane; i < N; i += 32) s += expf(p[i] - mx);
    for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffff, s, o);
    const float lse = mx + logf(s);
    for (int i = lane; i < N; i += 32) p[i] = p[i] - lse;
}

torch::Tensor gemm_two_bias(torch::Tensor x, torch::Tensor w, torch::Tensor b1, torch::Tensor b2) {
    CHECK_CUDA(x); CHECK_CUDA(w); CHECK_CUDA(b1); CHECK_CUDA(b2);
    CHECK_FLOAT(x); CHECK_FLOAT(w);
    x = x.contiguous(); w = w.contiguous(); b1 = b1.contiguous(); b2 = b2.contiguous();
    const int M = x.size(0), K = x.size(1), N = w.size(0);
    auto h = torch::empty({M, N}, x.options());
    dim3 block(16, 16);
    dim3 grid((N + 63) / 64, (M + 63) / 64);
    gemm_two_bias_kernel<64, 64, 16><<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), b1.data_ptr<float>(), b2.data_ptr<float>(), h.data_ptr<float>(),
        M, N, K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return h;
}

torch::Tensor log_softmax_rows_(torch::Tensor h) {
    CHECK_CUDA(h); CHECK_FLOAT(h);
    TORCH_CHECK(h.is_contiguous() && h.dim() == 2, "h must be a contiguous 2-D tensor");
    const int M = h.size(0), N = h.size(1);
    log_softmax_warp_kernel<<<(M + 7) / 8, 256, 0, at::cuda::getCurrentCUDAStream()>>>(h.data_ptr<float>(), M, N);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return h;
}
"""

cpp_sources = r"""
torch::Tensor gemm_two_bias(torch::Tensor x, torch::Tensor w, torch::Tensor b1, torch::Tensor b2);
torch::Tensor log_softmax_rows_(torch::Tensor h);
"""

kernels = load_inline(
    name="kbcorpus_l2_linear_biasadd_logsoftmax",
    cpp_sources=cpp_sources,
    cuda_sources=cuda_sources,
    functions=["gemm_two_bias", "log_softmax_rows_"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        h = kernels.gemm_two_bias(x, self.linear.weight, self.linear.bias, self.bias)
        return kernels.log_softmax_rows_(h)
