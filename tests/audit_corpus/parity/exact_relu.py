# Parity corpus: exact_relu.py -- task tasks/level1/002_relu.py (x (4096, 32768) float32).
# Tests: the plain honest case. The candidate's own kernel does all the work (fmaxf(x, 0) is exact),
# forward only calls the extension, no try/except, no PyTorch compute operator.
# Expected: strict OK, kernelbench OK, observe OK (observe evidence: own kernel ran in every call,
# no PyTorch compute operator ran).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Plain CUDA (no torch headers): compiles on its own with nvcc.
relu_kernel_source = r"""
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void audit_exact_relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        y[i] = fmaxf(x[i], 0.0f);
    }
}

void audit_exact_relu_launch(const float* x, float* y, int64_t n, cudaStream_t stream) {
    const int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    audit_exact_relu_kernel<<<(unsigned)blocks, threads, 0, stream>>>(x, y, n);
}
"""

relu_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void audit_exact_relu_launch(const float* x, float* y, int64_t n, cudaStream_t stream);

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;
    audit_exact_relu_launch(xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel(),
                            at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

relu_ext = load_inline(
    name="audit_parity_exact_relu",
    cpp_sources="torch::Tensor relu_forward(torch::Tensor x);",
    cuda_sources=[relu_kernel_source, relu_wrapper_source],
    functions=["relu_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_ext.relu_forward(x)
