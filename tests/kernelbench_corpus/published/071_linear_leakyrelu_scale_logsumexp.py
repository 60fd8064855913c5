import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The GEMM stays in PyTorch (torch.addmm with the layer's own weight and bias). LeakyReLU -> * scale
# -> logsumexp over the features is one kernel: one 256-thread block per row, classic shared-memory
# tree reductions for the row max and then for the sum of exp(v - max).
lse_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cmath>

#define BLOCK_SIZE 256

__global__ void leaky_scale_logsumexp_kernel(const float* __restrict__ input, float* __restrict__ output, int cols,
                                             float negative_slope, float scale) {
    __shared__ float sdata[BLOCK_SIZE];
    const int row = blockIdx.x;
    const int tid = threadIdx.x;
    const float* in_row = input + (size_t)row * cols;

    float local_max = -INFINITY;
    for (int j = tid; j < cols; j += BLOCK_SIZE) {
        float v = in_row[j];
        v = v > 0.0f ? v : v * negative_slope;
        v = v * scale;
        local_max = fmaxf(local_max, v);
    }
    sdata[tid] = local_max;
    __syncthreads();
    for (int s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] = fmaxf(sdata[tid], sdata[tid + s]);
        __syncthreads();
    }
    const float row_max = sdata[0];
    __syncthreads();

    float local_sum = 0.0f;
    for (int j = tid; j < cols; j += BLOCK_SIZE) {
        float v = in_row[j];
        v = v > 0.0f ? v : v * negative_slope;
        v = v * scale;
        local_sum += expf(v - row_max);
    }
    sdata[tid] = local_sum;
    __syncthreads();
    for (int s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) output[row] = row_max + logf(sdata[0]);
}

torch::Tensor leaky_scale_logsumexp(torch::Tensor input, double negative_slope, double scale) {
    TORCH_CHECK(input.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(input.dim() == 2, "input must be 2-D");
    TORCH_CHECK(input.scalar_type() == torch::kFloat32, "input must be float32");
    input = input.contiguous();
    const int rows = input.size(0), cols = input.size(1);
    auto output = torch::empty({rows, 1}, input.options());
    leaky_scale_logsumexp_kernel<<<rows, BLOCK_SIZE, 0, at::cuda::getCurrentCUDAStream()>>>(
        input.data_ptr<float>(), output.data_ptr<float>(), cols, (float)negative_slope, (float)scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return output;
}
"""

lse_cpp = "torch::Tensor leaky_scale_logsumexp(torch::Tensor input, double negative_slope, double scale);"

lse_ext = load_inline(
    name="kb_published_l2_071_leaky_scale_logsumexp",
    cpp_sources=lse_cpp,
    cuda_sources=lse_source,
    functions=["leaky_scale_logsumexp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, negative_slope, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.negative_slope = negative_slope
        self.scale_factor = scale_factor

    def forward(self, x):
        x = torch.addmm(self.linear.bias, x, self.linear.weight.t())
        return lse_ext.leaky_scale_logsumexp(x, self.negative_slope, self.scale_factor)
