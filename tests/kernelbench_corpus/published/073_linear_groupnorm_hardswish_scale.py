import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The GEMM stays in PyTorch (nn.Linear). GroupNorm over (N, C) -> HardSwish -> * scale is one kernel:
# one warp per (row, group) (here 64 features, two per lane), two-pass mean / centred variance
# with butterfly shuffles, no shared memory.
gn_hswish_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int kWarpsPerBlock = 8;
constexpr int kMaxPerLane = 8;   // group sizes up to 256 features

__device__ __forceinline__ float warp_allsum(float v) {
    #pragma unroll
    for (int mask = 16; mask > 0; mask >>= 1) v += __shfl_xor_sync(0xffffffffu, v, mask);
    return v;
}

__device__ __forceinline__ float hardswish(float v) {
    return v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f;
}

__global__ void groupnorm_hardswish_scale_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                                                 const float* __restrict__ beta, float* __restrict__ y,
                                                 int64_t n_rows, int features, int groups, float eps, float scale) {
    const int lane = threadIdx.x & 31;
    const int64_t warp_id = (int64_t)blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
    if (warp_id >= n_rows * groups) return;   // whole warp exits together
    const int64_t row = warp_id / groups;
    const int g = (int)(warp_id % groups);
    const int gsize = features / groups;
    const int64_t base = row * features + (int64_t)g * gsize;

    float vals[kMaxPerLane];
    float sum = 0.0f;
    #pragma unroll
    for (int k = 0; k < kMaxPerLane; ++k) {
        const int j = lane + 32 * k;
        vals[k] = j < gsize ? x[base + j] : 0.0f;
        sum += vals[k];
    }
    const float mean = warp_allsum(sum) / (float)gsize;
    float sq = 0.0f;
    #pragma unroll
    for (int k = 0; k < kMaxPerLane; ++k) {
        const int j = lane + 32 * k;
        if (j < gsize) {
            const float d = vals[k] - mean;
            sq += d * d;
        }
    }
    const float rstd = rsqrtf(warp_allsum(sq) / (float)gsize + eps);
    #pragma unroll
    for (int k = 0; k < kMaxPerLane; ++k) {
        const int j = lane + 32 * k;
        if (j < gsize) {
            const int c = g * gsize + j;
            const float nrm = (vals[k] - mean) * rstd * gamma[c] + beta[c];
            y[base + j] = hardswish(nrm) * scale;
        }
    }
}

torch::Tensor groupnorm_hardswish_scale(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, int64_t groups,
                                        double eps, double scale) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be a float32 CUDA tensor");
    TORCH_CHECK(x.dim() == 2, "x must be (N, C)");
    x = x.contiguous();
    gamma = gamma.contiguous();
    beta = beta.contiguous();
    const int64_t n_rows = x.size(0);
    const int features = (int)x.size(1);
    TORCH_CHECK(features % groups == 0, "features must divide into groups");
    TORCH_CHECK(features / groups <= 32 * kMaxPerLane, "group too large for one warp");
    auto y = torch::empty_like(x);
    const int64_t warps = n_rows * groups;
    const int64_t blocks = (warps + kWarpsPerBlock - 1) / kWarpsPerBlock;
    groupnorm_hardswish_scale_kernel<<<(unsigned)blocks, kWarpsPerBlock * 32, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), gamma.data_ptr<float>(), beta.data_ptr<float>(), y.data_ptr<float>(), n_rows, features,
        (int)groups, (float)eps, (float)scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

gn_hswish_cpp = (
    "torch::Tensor groupnorm_hardswish_scale(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, "
    "int64_t groups, double eps, double scale);"
)

gn_hswish = load_inline(
    name="kb_published_l2_073_groupnorm_hardswish_scale",
    cpp_sources=gn_hswish_cpp,
    cuda_sources=gn_hswish_source,
    functions=["groupnorm_hardswish_scale"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, num_groups, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.gn = nn.GroupNorm(num_groups, out_features)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.linear(x)
        return gn_hswish.groupnorm_hardswish_scale(
            x, self.gn.weight, self.gn.bias, self.gn.num_groups, self.gn.eps, self.scale_factor
        )
