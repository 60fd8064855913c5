# Parity corpus: tf32_matmul_diag.py -- task tasks/level1/019_matmul_diag.py (torch.diag(a) @ B,
#   a (4096,), B (4096, 4096) randn float32: the reference is a square 4096 matmul, TF32 off).
# Tests: the same honest TF32 tensor-core GEMM as tf32_matmul.py (wmma m16n16k8 tf32, float
# accumulation), here with A = diag(a) generated inside the kernel. Every output is one product
# a_i * B_ij of two TF32-rounded values plus exact zeros, so the relative error per element is at
# most (1 + 2^-11)^2 - 1 = 9.8e-4: the ~1e-3 relative error of TF32 with no accumulation noise
# around small outputs.
# Measured (C++ emulation, all 16,777,216 outputs, randn inputs, against float64):
#   max relative error 9.6e-4, max absolute error 7.5e-3, relative L2 2.9e-4;
#   kernelbench bound 1e-4 + 1e-4 |e|: 25.5% of elements fail (worst err/bound 7.5);
#   strict bound 1e-2 + 1e-2 |e|: none fail (worst err/bound 0.075).
# Expected: strict OK, kernelbench WRONG_OUTPUT, observe WRONG_OUTPUT.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Plain CUDA (no torch headers): compiles on its own with nvcc (-arch=sm_80 or newer).
tf32_kernel_source = r"""
#include <cuda_runtime.h>
#include <mma.h>
#include <stdint.h>
using namespace nvcuda;

// C[M, N] = A[M, K] @ B[K, N], row-major float32, on TF32 tensor cores (sm_80+):
// 64 x 64 block tile, 16-deep k tile, 4 warps each owning a 32 x 32 quarter (2 x 2 m16n16k8
// fragments), float accumulators. Tiles are staged through shared memory with zero padding, so
// any M, N, K works; the result goes through shared memory and is stored with bounds checks.
#define TF_BM 64
#define TF_BN 64
#define TF_BK 16
#define TF_PAD 8

__global__ void __launch_bounds__(128) tf32_wmma_gemm_kernel(
        const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
        int M, int N, int K, const float* __restrict__ diag) {
    __shared__ __align__(32) float As[TF_BM][TF_BK + TF_PAD];
    __shared__ __align__(32) float Bs[TF_BK][TF_BN + TF_PAD];
    __shared__ __align__(32) float Cs[TF_BM][TF_BN + TF_PAD];

    const int warp = threadIdx.x / 32;
    const int wm = (warp / 2) * 32;
    const int wn = (warp % 2) * 32;
    const int bm = blockIdx.y * TF_BM;
    const int bn = blockIdx.x * TF_BN;

    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[2][2];
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    for (int k0 = 0; k0 < K; k0 += TF_BK) {
        for (int idx = threadIdx.x; idx < TF_BM * TF_BK; idx += blockDim.x) {
            const int r = idx / TF_BK, c = idx % TF_BK;
            const int gr = bm + r, gc = k0 + c;
            float v = 0.0f;
            if (gr < M && gc < K) {
                // diag != nullptr: A is diag(diag), built on the fly (never stored in memory)
                v = diag ? (gr == gc ? diag[gr] : 0.0f) : A[(size_t)gr * K + gc];
            }
            As[r][c] = v;
        }
        for (int idx = threadIdx.x; idx < TF_BK * TF_BN; idx += blockDim.x) {
            const int r = idx / TF_BN, c = idx % TF_BN;
            const int gr = k0 + r, gc = bn + c;
            Bs[r][c] = (gr < K && gc < N) ? B[(size_t)gr * N + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TF_BK; kk += 8) {
            wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b[2];
            for (int i = 0; i < 2; ++i) {
                wmma::load_matrix_sync(a[i], &As[wm + i * 16][kk], TF_BK + TF_PAD);
                for (int t = 0; t < a[i].num_elements; ++t) a[i].x[t] = wmma::__float_to_tf32(a[i].x[t]);
            }
            for (int j = 0; j < 2; ++j) {
                wmma::load_matrix_sync(b[j], &Bs[kk][wn + j * 16], TF_BN + TF_PAD);
                for (int t = 0; t < b[j].num_elements; ++t) b[j].x[t] = wmma::__float_to_tf32(b[j].x[t]);
            }
            for (int i = 0; i < 2; ++i)
                for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(&Cs[wm + i * 16][wn + j * 16], acc[i][j], TF_BN + TF_PAD, wmma::mem_row_major);
    __syncthreads();
    for (int idx = threadIdx.x; idx < TF_BM * TF_BN; idx += blockDim.x) {
        const int r = idx / TF_BN, c = idx % TF_BN;
        const int gr = bm + r, gc = bn + c;
        if (gr < M && gc < N) C[(size_t)gr * N + gc] = Cs[r][c];
    }
}

void tf32_wmma_gemm_launch(const float* A, const float* B, float* C, int M, int N, int K,
                           const float* diag, cudaStream_t stream) {
    dim3 grid((N + TF_BN - 1) / TF_BN, (M + TF_BM - 1) / TF_BM);
    tf32_wmma_gemm_kernel<<<grid, 128, 0, stream>>>(A, B, C, M, N, K, diag);
}
"""

tf32_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void tf32_wmma_gemm_launch(const float* A, const float* B, float* C, int M, int N, int K,
                           const float* diag, cudaStream_t stream);

// diag(d) @ B through the tensor-core GEMM: the A tile is generated from d inside the kernel.
torch::Tensor tf32_diag_matmul(torch::Tensor d, torch::Tensor B) {
    TORCH_CHECK(d.is_cuda() && B.is_cuda(), "d and B must be CUDA tensors");
    TORCH_CHECK(d.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32, "float32 only");
    TORCH_CHECK(d.dim() == 1 && B.dim() == 2 && d.size(0) == B.size(0), "diag(d) (N, N) @ B (N, M)");
    auto dc = d.contiguous();
    auto b = B.contiguous();
    const int n = (int)dc.size(0), m = (int)b.size(1);
    auto C = torch::empty({n, m}, b.options());
    if (n == 0 || m == 0) return C;
    tf32_wmma_gemm_launch(dc.data_ptr<float>(), b.data_ptr<float>(), C.data_ptr<float>(), n, m, n,
                          dc.data_ptr<float>(), at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return C;
}
"""

tf32_ext = load_inline(
    name="audit_parity_tf32_matmul_diag",
    cpp_sources="torch::Tensor tf32_diag_matmul(torch::Tensor d, torch::Tensor B);",
    cuda_sources=[tf32_kernel_source, tf32_wrapper_source],
    functions=["tf32_diag_matmul"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return tf32_ext.tf32_diag_matmul(a, B)
