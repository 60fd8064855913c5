# expect: REJECTED
# Breaks one thing: the GEMM is cuBLAS's (cublasSgemm, linked with -lcublas), issued on a stream the
# extension creates itself with cudaStreamCreate and never joins back to PyTorch's current stream,
# so the work sits outside what the timer's stream sees and outside the operator audit. The built
# extension imports cudaStreamCreate: refused after the prebuild (no streams of its own).
# Task: tasks/level1/001_matmul_square.py (C = A @ B, 4096 x 4096).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cublas_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>

static cublasHandle_t handle = nullptr;
static cudaStream_t private_stream = nullptr;

torch::Tensor matmul_cublas(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32, "float32 expected");
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2 && A.size(1) == B.size(0), "A (M, K) @ B (K, N)");
    if (handle == nullptr) {
        TORCH_CHECK(cudaStreamCreate(&private_stream) == cudaSuccess, "cudaStreamCreate failed");
        TORCH_CHECK(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS, "cublasCreate failed");
        TORCH_CHECK(cublasSetStream(handle, private_stream) == CUBLAS_STATUS_SUCCESS, "cublasSetStream failed");
    }
    auto a = A.contiguous();
    auto b = B.contiguous();
    const int M = a.size(0), K = a.size(1), N = b.size(1);
    auto c = torch::empty({M, N}, a.options());
    const float alpha = 1.0f, beta = 0.0f;
    // Row-major C = A @ B is column-major C^T = B^T @ A^T.
    cublasStatus_t st = cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha,
                                    b.data_ptr<float>(), N, a.data_ptr<float>(), K, &beta, c.data_ptr<float>(), N);
    TORCH_CHECK(st == CUBLAS_STATUS_SUCCESS, "cublasSgemm failed");
    return c;  // no wait on private_stream
}
"""

cublas_ext = load_inline(
    name="kbcorpus_adv_cublas_private_stream",
    cpp_sources="torch::Tensor matmul_cublas(torch::Tensor A, torch::Tensor B);",
    cuda_sources=cublas_source,
    functions=["matmul_cublas"],
    extra_ldflags=["-lcublas"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return cublas_ext.matmul_cublas(A, B)
