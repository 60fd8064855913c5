# KernelBench-format candidate for examples/vector_add: ModelNew with a load_inline CUDA kernel.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

vector_add_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void vector_add_kernel(const float4* __restrict__ a, const float4* __restrict__ b,
                                  float4* __restrict__ c, int64_t n4,
                                  const float* a1, const float* b1, float* c1, int64_t n) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t i = tid; i < n4; i += stride) {
        float4 x = a[i], y = b[i];
        c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    for (int64_t i = n4 * 4 + tid; i < n; i += stride) c1[i] = a1[i] + b1[i];
}

torch::Tensor vector_add_cuda(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32,
                "inputs must be float32");
    TORCH_CHECK(a.sizes() == b.sizes(), "shape mismatch");
    a = a.contiguous();
    b = b.contiguous();
    auto c = torch::empty_like(a);
    int64_t n = a.numel();
    if (n == 0) return c;
    const int threads = 256;
    const int64_t max_blocks = 32LL * at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    int64_t blocks = std::min<int64_t>((n / 4 + threads - 1) / threads, max_blocks);
    if (blocks < 1) blocks = 1;
    vector_add_kernel<<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const float4*>(a.data_ptr<float>()),
        reinterpret_cast<const float4*>(b.data_ptr<float>()),
        reinterpret_cast<float4*>(c.data_ptr<float>()), n / 4,
        a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}
"""

vector_add_cpp_source = "torch::Tensor vector_add_cuda(torch::Tensor a, torch::Tensor b);"

vector_add = load_inline(
    name="kernelrl_example_vector_add",
    cpp_sources=vector_add_cpp_source,
    cuda_sources=vector_add_source,
    functions=["vector_add_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.vector_add = vector_add

    def forward(self, A, B):
        return self.vector_add.vector_add_cuda(A, B)
