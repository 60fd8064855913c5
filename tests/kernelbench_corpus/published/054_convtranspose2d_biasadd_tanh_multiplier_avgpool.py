import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# ConvTranspose2d stays in PyTorch. + bias -> tanh -> * multiplier -> AvgPool2d(2) is one kernel:
# one thread per pooled output reads its 2x2 window as two float2 (even width keeps them aligned).
epilogue_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void bias_tanh_mul_avgpool2x2_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                                const float* __restrict__ mult, float* __restrict__ out,
                                                int64_t total, int C, int H, int W, int OH, int OW) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        const int ow = (int)(idx % OW);
        const int oh = (int)((idx / OW) % OH);
        const int64_t nc = idx / ((int64_t)OW * OH);
        const int c = (int)(nc % C);
        const float b = bias[c];
        const float m = mult[c];
        const float* top = x + (nc * H + 2 * oh) * (int64_t)W + 2 * ow;
        const float2 r0 = *reinterpret_cast<const float2*>(top);
        const float2 r1 = *reinterpret_cast<const float2*>(top + W);
        const float v00 = tanhf(r0.x + b) * m;
        const float v01 = tanhf(r0.y + b) * m;
        const float v10 = tanhf(r1.x + b) * m;
        const float v11 = tanhf(r1.y + b) * m;
        out[idx] = (v00 + v01 + v10 + v11) / 4.0f;
    }
}

torch::Tensor bias_tanh_mul_avgpool(torch::Tensor x, torch::Tensor bias, torch::Tensor mult) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 4 && x.scalar_type() == at::kFloat, "x: float32 NCHW CUDA tensor");
    x = x.contiguous();
    bias = bias.contiguous();
    mult = mult.contiguous();
    const int64_t N = x.size(0);
    const int C = x.size(1), H = x.size(2), W = x.size(3);
    TORCH_CHECK(W % 2 == 0, "width must be even (float2 loads)");
    TORCH_CHECK(bias.numel() == C && mult.numel() == C, "bias/multiplier: one value per channel");
    const int OH = H / 2, OW = W / 2;
    auto out = torch::empty({N, C, OH, OW}, x.options());
    const int64_t total = out.numel();
    if (total == 0) return out;
    const int threads = 256;
    const int64_t max_blocks = (int64_t)at::cuda::getCurrentDeviceProperties()->multiProcessorCount * 32;
    const int64_t blocks = std::min<int64_t>((total + threads - 1) / threads, max_blocks);
    bias_tanh_mul_avgpool2x2_kernel<<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), bias.data_ptr<float>(), mult.data_ptr<float>(), out.data_ptr<float>(), total, C, H, W,
        OH, OW);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

epilogue_cpp = "torch::Tensor bias_tanh_mul_avgpool(torch::Tensor x, torch::Tensor bias, torch::Tensor mult);"

epilogue = load_inline(
    name="kb_published_l2_054_bias_tanh_mul_avgpool",
    cpp_sources=epilogue_cpp,
    cuda_sources=epilogue_source,
    functions=["bias_tanh_mul_avgpool"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape, multiplier_shape, pool_kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)
        self.multiplier = nn.Parameter(1.0 + 0.1 * torch.randn(multiplier_shape))
        assert pool_kernel_size == 2, "this kernel implements AvgPool2d(2)"

    def forward(self, x):
        x = self.conv(x)
        return epilogue.bias_tanh_mul_avgpool(x, self.bias, self.multiplier)
