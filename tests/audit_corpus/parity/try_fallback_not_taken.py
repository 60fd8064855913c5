# Parity corpus: try_fallback_not_taken.py -- task tasks/level1/002_relu.py (x (4096, 32768) float32).
# Tests: the LLM habit of wrapping the custom kernel in try/except with a PyTorch fallback. The
# kernel is correct and always works (float32 CUDA input, any size), so the except branch never
# runs: every call runs the own kernel and no PyTorch compute operator.
# Expected: strict REJECTED, kernelbench REJECTED (try/except refused statically, as KernelBench's
# static checker does), observe OK (evidence: own kernel ran in every call, fallback in none).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Plain CUDA (no torch headers): compiles on its own with nvcc.
relu_kernel_source = r"""
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += stride) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

cudaError_t relu_launch(const float* x, float* y, int64_t n, int threads, cudaStream_t stream) {
    int64_t blocks = (n + threads - 1) / threads;
    if (blocks > 262144) blocks = 262144;
    relu_kernel<<<(unsigned)blocks, threads, 0, stream>>>(x, y, n);
    return cudaGetLastError();
}
"""

relu_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

cudaError_t relu_launch(const float* x, float* y, int64_t n, int threads, cudaStream_t stream);

torch::Tensor relu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;
    cudaError_t err = relu_launch(xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel(), 256,
                                  at::cuda::getCurrentCUDAStream());
    TORCH_CHECK(err == cudaSuccess, "relu kernel launch failed: ", cudaGetErrorString(err));
    return y;
}
"""

try:
    relu_module = load_inline(
        name="audit_parity_try_not_taken",
        cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
        cuda_sources=[relu_kernel_source, relu_wrapper_source],
        functions=["relu_cuda"],
        verbose=False,
    )
except Exception as e:
    print(f"Failed to compile custom ReLU kernel: {e}")
    relu_module = None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu_module = relu_module

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.relu_module is not None and x.is_cuda and x.dtype == torch.float32:
            try:
                return self.relu_module.relu_cuda(x)
            except Exception:
                # Fallback to PyTorch implementation if the custom kernel fails
                return torch.relu(x)
        return torch.relu(x)
