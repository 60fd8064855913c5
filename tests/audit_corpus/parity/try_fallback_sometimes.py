# Parity corpus: try_fallback_sometimes.py -- task tasks/level1/002_relu.py (x (4096, 32768) float32).
# Tests: a fallback that runs on some calls only. ModelNew "autotunes" the block size by cycling
# through BLOCK_SIZES = (256, 512, 2048) call after call; 2048 threads per block is above the
# hardware limit of 1024, so every 3rd call (calls 3, 6, 9, ...) the launch fails with
# cudaErrorInvalidConfiguration (not a sticky error: the context stays usable), the wrapper raises,
# and the except computes that call's output with torch.relu. The other calls run the own kernel.
# Outputs are correct on every call.
# Expected: strict REJECTED, kernelbench REJECTED (try/except refused statically), observe OK
# (evidence: own kernel ran in 2 of every 3 calls, the fallback with aten::relu in the others, so
# both appear once the engine makes 3 or more calls).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

BLOCK_SIZES = (256, 512, 2048)

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

torch::Tensor relu_cuda(torch::Tensor x, int64_t threads) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;
    cudaError_t err = relu_launch(xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel(), (int)threads,
                                  at::cuda::getCurrentCUDAStream());
    TORCH_CHECK(err == cudaSuccess, "relu kernel launch failed: ", cudaGetErrorString(err));
    return y;
}
"""

relu_module = load_inline(
    name="audit_parity_try_sometimes",
    cpp_sources="torch::Tensor relu_cuda(torch::Tensor x, int64_t threads);",
    cuda_sources=[relu_kernel_source, relu_wrapper_source],
    functions=["relu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        threads = BLOCK_SIZES[self.calls % len(BLOCK_SIZES)]
        self.calls += 1
        try:
            return relu_module.relu_cuda(x, threads)
        except Exception:
            return torch.relu(x)
