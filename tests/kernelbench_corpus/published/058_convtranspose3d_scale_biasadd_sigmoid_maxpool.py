import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# ConvTranspose3d stays in PyTorch. * scale -> + bias -> sigmoid -> MaxPool3d(2) is one kernel.
# sigmoid is monotonic, so the max of the window is taken before it and sigmoid runs once per
# output instead of eight times.
pool_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cmath>

__global__ void scale_bias_sigmoid_maxpool3d_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                                    float* __restrict__ y, int C, int D, int H, int W, int OD,
                                                    int OH, int OW, int64_t total, float scale) {
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int ow = idx % OW;
    const int oh = (idx / OW) % OH;
    const int od = (idx / ((int64_t)OW * OH)) % OD;
    const int64_t nc = idx / ((int64_t)OW * OH * OD);
    const int c = nc % C;
    const float b = bias[c];
    const float* src = x + nc * D * H * W;

    float best = -INFINITY;
    #pragma unroll
    for (int kd = 0; kd < 2; ++kd) {
        #pragma unroll
        for (int kh = 0; kh < 2; ++kh) {
            const float* row = src + ((int64_t)(2 * od + kd) * H + (2 * oh + kh)) * W + 2 * ow;
            const float a0 = row[0] * scale + b;
            const float a1 = row[1] * scale + b;
            best = fmaxf(best, fmaxf(a0, a1));
        }
    }
    y[idx] = 1.0f / (1.0f + expf(-best));
}

torch::Tensor scale_bias_sigmoid_maxpool3d(torch::Tensor x, torch::Tensor bias, double scale) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 5 && x.scalar_type() == torch::kFloat32, "x: float32 NCDHW CUDA tensor");
    x = x.contiguous();
    bias = bias.contiguous();
    const int64_t N = x.size(0);
    const int C = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4);
    TORCH_CHECK(bias.numel() == C, "bias: one value per channel");
    const int OD = D / 2, OH = H / 2, OW = W / 2;
    auto y = torch::empty({N, C, OD, OH, OW}, x.options());
    const int64_t total = y.numel();
    if (total == 0) return y;
    const int threads = 256;
    scale_bias_sigmoid_maxpool3d_kernel<<<(unsigned)((total + threads - 1) / threads), threads, 0,
                                          at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(), C, D, H, W, OD, OH, OW, total,
        (float)scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

pool_cpp = "torch::Tensor scale_bias_sigmoid_maxpool3d(torch::Tensor x, torch::Tensor bias, double scale);"

fused_pool = load_inline(
    name="kb_published_l2_058_scale_bias_sigmoid_maxpool3d",
    cpp_sources=pool_cpp,
    cuda_sources=pool_source,
    functions=["scale_bias_sigmoid_maxpool3d"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, scale_factor, bias_shape, pool_kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.scale_factor = scale_factor
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        x = self.conv(x)
        return fused_pool.scale_bias_sigmoid_maxpool3d(x, self.bias, self.scale_factor)
