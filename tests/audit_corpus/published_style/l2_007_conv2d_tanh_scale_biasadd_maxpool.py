# Published-style solution for tasks/level2/007_conv2d_tanh_scale_biasadd_maxpool.py: Conv2d in PyTorch,
# then one kernel per pooled output: tanh * scale + bias[c] on the 2x2 window, max (floor mode, no
# padding: (190, 318) -> (95, 159)). Expected: kernelbench OK, strict REJECTED (aten convolution).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

epilogue_kernel_source = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__global__ void tanh_scale_bias_maxpool_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                               float* __restrict__ y, int C, int H, int W, int OH, int OW,
                                               int K, float scale, int64_t total) {
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int ow = idx % OW;
    const int oh = (idx / OW) % OH;
    const int64_t nc = idx / ((int64_t)OW * OH);
    const int c = nc % C;
    const float* plane = x + nc * H * W;
    const float b = bias[c];
    float m = -INFINITY;
    for (int i = 0; i < K; ++i)
        for (int j = 0; j < K; ++j) {
            const float v = tanhf(plane[(oh * K + i) * W + ow * K + j]) * scale + b;
            m = fmaxf(m, v);
        }
    y[idx] = m;
}

void tanh_scale_bias_maxpool_launch(const float* x, const float* bias, float* y, int N, int C, int H, int W,
                                    int K, float scale, cudaStream_t stream) {
    const int OH = H / K, OW = W / K;
    const int64_t total = (int64_t)N * C * OH * OW;
    if (total == 0) return;
    tanh_scale_bias_maxpool_kernel<<<(unsigned)((total + 255) / 256), 256, 0, stream>>>(
        x, bias, y, C, H, W, OH, OW, K, scale, total);
}
"""

epilogue_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void tanh_scale_bias_maxpool_launch(const float* x, const float* bias, float* y, int N, int C, int H, int W,
                                    int K, float scale, cudaStream_t stream);

torch::Tensor tanh_scale_bias_maxpool(torch::Tensor x, torch::Tensor bias, double scale, int64_t k) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 4 && x.scalar_type() == torch::kFloat32, "NCHW float32 CUDA");
    auto xc = x.contiguous();
    auto b = bias.contiguous();
    const int N = xc.size(0), C = xc.size(1), H = xc.size(2), W = xc.size(3);
    auto y = torch::empty({N, C, H / k, W / k}, xc.options());
    tanh_scale_bias_maxpool_launch(xc.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), N, C, H, W,
                                   (int)k, (float)scale, at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

epilogue = load_inline(
    name="audit_pub_l2_007_tanh_scale_bias_maxpool",
    cpp_sources="torch::Tensor tanh_scale_bias_maxpool(torch::Tensor x, torch::Tensor bias, double scale, int64_t k);",
    cuda_sources=[epilogue_kernel_source, epilogue_wrapper_source],
    functions=["tanh_scale_bias_maxpool"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scale_factor, bias_shape, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale_factor = scale_factor
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)
        self.pool_kernel_size = pool_kernel_size

    def forward(self, x):
        x = self.conv(x)
        return epilogue.tanh_scale_bias_maxpool(x, self.bias, self.scale_factor, self.pool_kernel_size)
