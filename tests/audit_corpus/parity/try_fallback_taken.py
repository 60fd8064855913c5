# Parity corpus: try_fallback_taken.py -- task tasks/level1/002_relu.py (x (4096, 32768) float32,
#   134,217,728 elements).
# Tests: a try/except fallback that runs on every call. The wrapper guards its int32 indexing with
# a limit far below what the task uses (MAX_ELEMENTS = 2^26 = 67,108,864 < 134,217,728), so it raises
# (TORCH_CHECK -> RuntimeError) before launching anything, the except catches it and torch.relu
# computes the (correct) output. The module builds fine: the failure is at run time, in every call.
# (Chosen over a deliberately broken load_inline at module level, whose outcome would depend on how
# the engine treats a failed build inside try.)
# Expected: strict REJECTED, kernelbench REJECTED (try/except refused statically), observe OK
# (evidence: the fallback ran in every call, no own kernel ran; PyTorch compute operator aten::relu).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

MAX_ELEMENTS = 1 << 26  # "int32 grid indexing": the wrapper refuses larger tensors

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

torch::Tensor relu_cuda(torch::Tensor x, int64_t max_elements) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    TORCH_CHECK(x.numel() <= max_elements, "relu_cuda: ", x.numel(), " elements exceed the supported ",
                max_elements, " (int32 indexing)");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;
    cudaError_t err = relu_launch(xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel(), 256,
                                  at::cuda::getCurrentCUDAStream());
    TORCH_CHECK(err == cudaSuccess, "relu kernel launch failed: ", cudaGetErrorString(err));
    return y;
}
"""

relu_module = load_inline(
    name="audit_parity_try_taken",
    cpp_sources="torch::Tensor relu_cuda(torch::Tensor x, int64_t max_elements);",
    cuda_sources=[relu_kernel_source, relu_wrapper_source],
    functions=["relu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        try:
            return relu_module.relu_cuda(x, MAX_ELEMENTS)
        except RuntimeError:
            # Input not supported by the custom kernel: use PyTorch
            return torch.relu(x)
