import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Conv2d stays in PyTorch; divide, bias add, LeakyReLU and AvgPool2d(k) (stride k, no padding)
# are one kernel: each thread computes one pooled output from its k x k window.
source = r"""
#include <torch/extension.h>

__global__ void div_bias_leaky_avgpool_kernel(const float* __restrict__ input, const float* __restrict__ bias,
                                              float* __restrict__ output, int batch, int channels, int height,
                                              int width, int out_h, int out_w, int k, float divisor,
                                              float negative_slope) {
    const int index = blockIdx.x * blockDim.x + threadIdx.x;
    const int total = batch * channels * out_h * out_w;
    if (index >= total) return;
    const int ow = index % out_w;
    const int oh = (index / out_w) % out_h;
    const int c = (index / (out_w * out_h)) % channels;
    const int n = index / (out_w * out_h * channels);

    const float b = bias[c];
    const float* plane = input + ((size_t)n * channels + c) * height * width;
    float sum = 0.0f;
    for (int i = 0; i < k; ++i) {
        const float* row = plane + (size_t)(oh * k + i) * width + ow * k;
        for (int j = 0; j < k; ++j) {
            float v = row[j] / divisor + b;
            v = v > 0.0f ? v : v * negative_slope;
            sum += v;
        }
    }
    output[index] = sum / (float)(k * k);
}

torch::Tensor div_bias_leaky_avgpool(torch::Tensor input, torch::Tensor bias, double divisor,
                                     double negative_slope, int64_t k) {
    TORCH_CHECK(input.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(input.dim() == 4, "input must be 4-D");
    input = input.contiguous();
    bias = bias.contiguous();
    const int batch = input.size(0), channels = input.size(1), height = input.size(2), width = input.size(3);
    const int out_h = height / k, out_w = width / k;
    TORCH_CHECK(bias.numel() == channels, "bias: one value per channel");
    auto output = torch::empty({batch, channels, out_h, out_w}, input.options());
    const int total = batch * channels * out_h * out_w;
    if (total == 0) return output;
    const int threads = 256;
    const int blocks = (total + threads - 1) / threads;
    div_bias_leaky_avgpool_kernel<<<blocks, threads>>>(input.data_ptr<float>(), bias.data_ptr<float>(),
                                                       output.data_ptr<float>(), batch, channels, height, width,
                                                       out_h, out_w, (int)k, (float)divisor, (float)negative_slope);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "div_bias_leaky_avgpool_kernel launch failed: ", cudaGetErrorString(err));
    return output;
}
"""

cpp_source = (
    "torch::Tensor div_bias_leaky_avgpool(torch::Tensor input, torch::Tensor bias, double divisor, "
    "double negative_slope, int64_t k);"
)

fused_epilogue = load_inline(
    name="kb_published_l2_024_div_bias_leaky_avgpool",
    cpp_sources=cpp_source,
    cuda_sources=source,
    functions=["div_bias_leaky_avgpool"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, divisor, bias_shape, negative_slope, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.divisor = divisor
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)
        self.negative_slope = negative_slope
        self.pool_kernel_size = pool_kernel_size

    def forward(self, x):
        x = self.conv(x)
        return fused_epilogue.div_bias_leaky_avgpool(x, self.bias, self.divisor, self.negative_slope, self.pool_kernel_size)
