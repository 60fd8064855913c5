import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Number of chunks each (sample, group) slice is split into for the statistics pass.
STAT_CHUNKS = 64

groupnorm_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Kernel 1: partial sum and sum of squares of one chunk of one (n, g) slice.
// A slice is contiguous in NCHW: (C / G) channels x H x W elements.
__global__ void gn_partial_stats(const float* __restrict__ x, float2* __restrict__ partial,
                                 int64_t slice_len, int chunks) {
    const int64_t slice = blockIdx.y;
    const int chunk = blockIdx.x;
    const int64_t chunk_len = (slice_len + chunks - 1) / chunks;
    const int64_t begin = chunk * chunk_len;
    const int64_t end = (begin + chunk_len < slice_len) ? begin + chunk_len : slice_len;
    const float* base = x + slice * slice_len;

    float s = 0.f, ss = 0.f;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
        float v = base[i];
        s += v;
        ss += v * v;
    }
    s = warp_sum(s);
    ss = warp_sum(ss);
    __shared__ float sh_s[32], sh_ss[32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) { sh_s[wid] = s; sh_ss[wid] = ss; }
    __syncthreads();
    if (wid == 0) {
        const int n_warps = blockDim.x >> 5;
        s = lane < n_warps ? sh_s[lane] : 0.f;
        ss = lane < n_warps ? sh_ss[lane] : 0.f;
        s = warp_sum(s);
        ss = warp_sum(ss);
        if (lane == 0) partial[slice * chunks + chunk] = make_float2(s, ss);
    }
}

// Kernel 2: combine the chunks of each slice (in double) into mean and 1/std.
__global__ void gn_finalize_stats(const float2* __restrict__ partial, float2* __restrict__ stats,
                                  int64_t n_slices, int chunks, int64_t slice_len, float eps) {
    const int64_t slice = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (slice >= n_slices) return;
    double s = 0.0, ss = 0.0;
    for (int c = 0; c < chunks; ++c) {
        float2 p = partial[slice * chunks + c];
        s += p.x;
        ss += p.y;
    }
    const double mean = s / (double)slice_len;
    double var = ss / (double)slice_len - mean * mean;
    if (var < 0.0) var = 0.0;
    stats[slice] = make_float2((float)mean, (float)(1.0 / sqrt(var + (double)eps)));
}

// Kernel 3: normalise and apply the per-channel affine transform.
__global__ void gn_apply(const float* __restrict__ x, const float2* __restrict__ stats,
                         const float* __restrict__ gamma, const float* __restrict__ beta,
                         float* __restrict__ y, int C, int G, int64_t hw) {
    const int64_t nc = blockIdx.y;
    const int c = (int)(nc % C);
    const int64_t n = nc / C;
    const int g = c / (C / G);
    const float2 st = stats[n * G + g];
    const float scale = st.y * gamma[c];
    const float shift = beta[c] - st.x * scale;
    const float* xp = x + nc * hw;
    float* yp = y + nc * hw;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < hw; i += (int64_t)gridDim.x * blockDim.x) {
        yp[i] = fmaf(xp[i], scale, shift);
    }
}

torch::Tensor group_norm_forward(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta,
                                 int64_t groups, double eps, int64_t chunks) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be a float32 CUDA tensor");
    TORCH_CHECK(x.dim() >= 2, "x must be (N, C, ...)");
    auto xc = x.contiguous();
    const int64_t N = xc.size(0), C = xc.size(1);
    TORCH_CHECK(C % groups == 0, "channels must divide into groups");
    const int64_t hw = xc.numel() / (N * C);
    const int64_t slice_len = (C / groups) * hw;
    const int64_t n_slices = N * groups;
    TORCH_CHECK(n_slices <= 65535 && N * C <= 65535, "too many slices for gridDim.y");
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;

    auto partial = torch::empty({n_slices * chunks * 2}, xc.options());
    auto stats = torch::empty({n_slices * 2}, xc.options());
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();

    gn_partial_stats<<<dim3((unsigned)chunks, (unsigned)n_slices), 512, 0, stream>>>(
        xc.data_ptr<float>(), reinterpret_cast<float2*>(partial.data_ptr<float>()), slice_len, (int)chunks);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    gn_finalize_stats<<<(unsigned)((n_slices + 127) / 128), 128, 0, stream>>>(
        reinterpret_cast<const float2*>(partial.data_ptr<float>()), reinterpret_cast<float2*>(stats.data_ptr<float>()),
        n_slices, (int)chunks, slice_len, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    int64_t bx = (hw + 255) / 256;
    if (bx > 64) bx = 64;
    gn_apply<<<dim3((unsigned)bx, (unsigned)(N * C)), 256, 0, stream>>>(
        xc.data_ptr<float>(), reinterpret_cast<const float2*>(stats.data_ptr<float>()),
        gamma.contiguous().data_ptr<float>(), beta.contiguous().data_ptr<float>(), y.data_ptr<float>(),
        (int)C, (int)groups, hw);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

groupnorm_cpp = (
    "torch::Tensor group_norm_forward(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, "
    "int64_t groups, double eps, int64_t chunks);"
)

groupnorm_ext = load_inline(
    name="kbcorpus_l1_groupnorm_3pass",
    cpp_sources=groupnorm_cpp,
    cuda_sources=groupnorm_source,
    functions=["group_norm_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, num_groups: int, num_channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_channels)
        with torch.no_grad():
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return groupnorm_ext.group_norm_forward(
            x, self.gn.weight, self.gn.bias, self.gn.num_groups, self.gn.eps, STAT_CHUNKS
        )
