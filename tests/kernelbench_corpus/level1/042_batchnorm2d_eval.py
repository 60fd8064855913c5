import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

bn_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

// Fold the running statistics and the affine parameters into one scale and shift per channel:
// y = x * scale + shift, scale = w / sqrt(var + eps), shift = b - mean * scale.
__global__ void bn_fold_kernel(const float* __restrict__ w, const float* __restrict__ b,
                               const float* __restrict__ mean, const float* __restrict__ var,
                               float eps, int C, float* __restrict__ folded) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < C) {
        float scale = w[c] / sqrtf(var[c] + eps);
        folded[c] = scale;
        folded[C + c] = b[c] - mean[c] * scale;
    }
}

// One block row per (n, c) plane; blocks along x cover the plane in float4 steps.
__global__ void bn_apply_kernel(const float* __restrict__ x, const float* __restrict__ folded,
                                float* __restrict__ y, int C, int64_t plane) {
    const int64_t nc = blockIdx.y;
    const int c = (int)(nc % C);
    const float scale = folded[c];
    const float shift = folded[C + c];
    const float* xp = x + nc * plane;
    float* yp = y + nc * plane;
    const int64_t n_vec = plane / 4;
    const float4* x4 = reinterpret_cast<const float4*>(xp);
    float4* y4 = reinterpret_cast<float4*>(yp);
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_vec; i += (int64_t)gridDim.x * blockDim.x) {
        float4 v = x4[i];
        v.x = fmaf(v.x, scale, shift);
        v.y = fmaf(v.y, scale, shift);
        v.z = fmaf(v.z, scale, shift);
        v.w = fmaf(v.w, scale, shift);
        y4[i] = v;
    }
    // plane is a multiple of 4 here (checked on the host), so no tail.
}

torch::Tensor bn_fold(torch::Tensor weight, torch::Tensor bias, torch::Tensor running_mean,
                      torch::Tensor running_var, double eps) {
    TORCH_CHECK(weight.is_cuda(), "parameters must be on CUDA");
    const int C = weight.numel();
    auto folded = torch::empty({2, C}, weight.options());
    const int threads = 128;
    bn_fold_kernel<<<(C + threads - 1) / threads, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        weight.contiguous().data_ptr<float>(), bias.contiguous().data_ptr<float>(),
        running_mean.contiguous().data_ptr<float>(), running_var.contiguous().data_ptr<float>(),
        (float)eps, C, folded.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return folded;
}

torch::Tensor bn_apply(torch::Tensor x, torch::Tensor folded) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 4, "x must be a 4-D CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    auto xc = x.contiguous();
    const int N = xc.size(0), C = xc.size(1);
    const int64_t plane = xc.size(2) * xc.size(3);
    TORCH_CHECK(plane % 4 == 0, "H*W must be a multiple of 4");
    TORCH_CHECK(folded.size(1) == C, "folded parameters do not match the channels");
    TORCH_CHECK((int64_t)N * C <= 65535, "too many planes for gridDim.y");
    auto y = torch::empty_like(xc);
    if (y.numel() == 0) return y;
    const int threads = 256;
    int64_t blocks_x = (plane / 4 + threads - 1) / threads;
    if (blocks_x > 32) blocks_x = 32;
    dim3 grid((unsigned)blocks_x, (unsigned)(N * C));
    bn_apply_kernel<<<grid, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), folded.data_ptr<float>(), y.data_ptr<float>(), C, plane);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

bn_cpp_source = """
torch::Tensor bn_fold(torch::Tensor weight, torch::Tensor bias, torch::Tensor running_mean,
                      torch::Tensor running_var, double eps);
torch::Tensor bn_apply(torch::Tensor x, torch::Tensor folded);
"""

bn_ext = load_inline(
    name="kbcorpus_l1_batchnorm_eval",
    cpp_sources=bn_cpp_source,
    cuda_sources=bn_cuda_source,
    functions=["bn_fold", "bn_apply"],
    verbose=False,
)


class ModelNew(nn.Module):
    """BatchNorm2d in eval mode (running statistics) with two custom kernels."""

    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features)
        # Draw the same non-trivial parameters and statistics as the reference's constructor.
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        folded = bn_ext.bn_fold(self.bn.weight, self.bn.bias, self.bn.running_mean, self.bn.running_var, self.bn.eps)
        return bn_ext.bn_apply(x, folded)
