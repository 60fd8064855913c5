# Published-style solution for tasks/level2/088_linear_maxpool_gelu_scale.py: nn.Linear in PyTorch
# (cuBLAS), then one kernel: MaxPool1d(4) over features, exact-erf GELU, * scale.
# Expected: kernelbench OK, strict REJECTED (aten addmm).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

pool_gelu_kernel_source = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__global__ void maxpool_gelu_scale_kernel(const float* __restrict__ x, float* __restrict__ y, int F, int K,
                                          int OF, float scale, int64_t total) {
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int64_t row = idx / OF;
    const int o = idx % OF;
    const float* p = x + row * F + (int64_t)o * K;
    float m = p[0];
    for (int k = 1; k < K; ++k) m = fmaxf(m, p[k]);
    const float g = 0.5f * m * (1.0f + erff(m * 0.70710678118654752f));
    y[idx] = g * scale;
}

void maxpool_gelu_scale_launch(const float* x, float* y, int64_t rows, int F, int K, float scale, cudaStream_t stream) {
    const int OF = F / K;
    const int64_t total = rows * OF;
    if (total == 0) return;
    maxpool_gelu_scale_kernel<<<(unsigned)((total + 255) / 256), 256, 0, stream>>>(x, y, F, K, OF, scale, total);
}
"""

pool_gelu_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void maxpool_gelu_scale_launch(const float* x, float* y, int64_t rows, int F, int K, float scale, cudaStream_t stream);

torch::Tensor maxpool_gelu_scale(torch::Tensor x, int64_t k, double scale) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.scalar_type() == torch::kFloat32, "2-D float32 CUDA");
    auto xc = x.contiguous();
    auto y = torch::empty({xc.size(0), xc.size(1) / k}, xc.options());
    maxpool_gelu_scale_launch(xc.data_ptr<float>(), y.data_ptr<float>(), xc.size(0), (int)xc.size(1), (int)k,
                              (float)scale, at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

pool_gelu = load_inline(
    name="audit_pub_l2_088_maxpool_gelu_scale",
    cpp_sources="torch::Tensor maxpool_gelu_scale(torch::Tensor x, int64_t k, double scale);",
    cuda_sources=[pool_gelu_kernel_source, pool_gelu_wrapper_source],
    functions=["maxpool_gelu_scale"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, pool_kernel_size, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.pool_kernel_size = pool_kernel_size
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.linear(x)
        return pool_gelu.maxpool_gelu_scale(x, self.pool_kernel_size, self.scale_factor)
