import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Conv2d stays in PyTorch (cuDNN); ReLU and the per-channel bias add are fused into one
# elementwise kernel (float4 when every channel plane holds a multiple of 4 floats).
relu_bias_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>

__global__ void relu_bias_add_vec4_kernel(const float4* __restrict__ x, const float* __restrict__ bias,
                                          float4* __restrict__ out, int64_t n_vec, int64_t hw_vec, int channels) {
    int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = idx; i < n_vec; i += stride) {
        // the 4 floats of one float4 lie in the same channel plane (hw % 4 == 0)
        const int c = (int)((i / hw_vec) % channels);
        const float b = __ldg(bias + c);
        float4 v = x[i];
        v.x = fmaxf(v.x, 0.0f) + b;
        v.y = fmaxf(v.y, 0.0f) + b;
        v.z = fmaxf(v.z, 0.0f) + b;
        v.w = fmaxf(v.w, 0.0f) + b;
        out[i] = v;
    }
}

__global__ void relu_bias_add_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                     float* __restrict__ out, int64_t n, int64_t hw, int channels) {
    int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = idx; i < n; i += stride) {
        const int c = (int)((i / hw) % channels);
        out[i] = fmaxf(x[i], 0.0f) + bias[c];
    }
}

torch::Tensor relu_bias_add_cuda(torch::Tensor x, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 4, "x must be NCHW");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    x = x.contiguous();
    auto b = bias.contiguous().view({-1});
    const int channels = (int)x.size(1);
    TORCH_CHECK(b.numel() == channels, "bias must hold one value per channel");
    const int64_t hw = x.size(2) * x.size(3);
    const int64_t n = x.numel();
    auto out = torch::empty_like(x);
    if (n == 0) return out;

    const int threads = 256;
    if (hw % 4 == 0) {
        const int64_t n_vec = n / 4;
        const int blocks = (int)std::min<int64_t>((n_vec + threads - 1) / threads, 65535);
        relu_bias_add_vec4_kernel<<<blocks, threads>>>(
            reinterpret_cast<const float4*>(x.data_ptr<float>()), b.data_ptr<float>(),
            reinterpret_cast<float4*>(out.data_ptr<float>()), n_vec, hw / 4, channels);
    } else {
        const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
        relu_bias_add_kernel<<<blocks, threads>>>(x.data_ptr<float>(), b.data_ptr<float>(),
                                                  out.data_ptr<float>(), n, hw, channels);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

relu_bias_cpp_source = "torch::Tensor relu_bias_add_cuda(torch::Tensor x, torch::Tensor bias);"

relu_bias_add = load_inline(
    name="kb_published_l2_001_relu_bias_add",
    cpp_sources=relu_bias_cpp_source,
    cuda_sources=relu_bias_source,
    functions=["relu_bias_add_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)
        self.relu_bias_add = relu_bias_add

    def forward(self, x):
        x = self.conv(x)
        return self.relu_bias_add.relu_bias_add_cuda(x, self.bias)
