# Published-style solution for tasks/level2/086_linear_scale_softmax_residualmul_sumfeatures.py:
# nn.Linear in PyTorch plus a fused softmax(scale * y) * y row-sum kernel that keeps the row in a
# 1024-float shared buffer, inside try/except. The task has 4096 features, so the wrapper raises on
# every call and the PyTorch chain computes every output (correct values).
# Expected: strict REJECTED, kernelbench REJECTED (try/except), observe OK (fallback in every call,
# no own kernel ran).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

MAX_FEATURES = 1024

softmax_sum_kernel_source = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

// One block of 1024 threads per row; the row (F <= 1024) is kept in shared memory.
__global__ void __launch_bounds__(1024) softmax_resmul_rowsum_kernel(const float* __restrict__ y,
                                                                     float* __restrict__ out, int F, float scale) {
    __shared__ float row[1024];
    __shared__ float red[32];
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const float v = t < F ? y[(int64_t)blockIdx.x * F + t] : 0.0f;
    row[t] = v;
    float m = t < F ? v * scale : -INFINITY;
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
    if (lane == 0) red[warp] = m;
    __syncthreads();
    m = red[0];
    for (int w = 1; w < 32; ++w) m = fmaxf(m, red[w]);
    __syncthreads();
    const float e = t < F ? expf(row[t] * scale - m) : 0.0f;
    float s = e, ws = e * row[t];
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_xor_sync(0xffffffff, s, o);
        ws += __shfl_xor_sync(0xffffffff, ws, o);
    }
    __shared__ float red2[32];
    if (lane == 0) { red[warp] = s; red2[warp] = ws; }
    __syncthreads();
    if (t == 0) {
        float S = 0.0f, W = 0.0f;
        for (int w = 0; w < 32; ++w) { S += red[w]; W += red2[w]; }
        out[blockIdx.x] = W / S;
    }
}

void softmax_resmul_rowsum_launch(const float* y, float* out, int rows, int F, float scale, cudaStream_t stream) {
    if (rows > 0) softmax_resmul_rowsum_kernel<<<rows, 1024, 0, stream>>>(y, out, F, scale);
}
"""

softmax_sum_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void softmax_resmul_rowsum_launch(const float* y, float* out, int rows, int F, float scale, cudaStream_t stream);

torch::Tensor softmax_resmul_rowsum(torch::Tensor y, double scale, int64_t max_features) {
    TORCH_CHECK(y.dim() == 2 && y.scalar_type() == torch::kFloat32, "2-D float32");
    TORCH_CHECK(y.size(1) <= max_features, "softmax_resmul_rowsum: at most ", max_features, " features per row");
    auto yc = y.contiguous();
    auto out = torch::empty({yc.size(0), 1}, yc.options());
    softmax_resmul_rowsum_launch(yc.data_ptr<float>(), out.data_ptr<float>(), (int)yc.size(0), (int)yc.size(1),
                                 (float)scale, at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

softmax_sum = load_inline(
    name="audit_pub_l2_086_softmax_resmul_rowsum",
    cpp_sources="torch::Tensor softmax_resmul_rowsum(torch::Tensor y, double scale, int64_t max_features);",
    cuda_sources=[softmax_sum_kernel_source, softmax_sum_wrapper_source],
    functions=["softmax_resmul_rowsum"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale_factor = scale_factor

    def forward(self, x):
        y = self.linear(x)
        try:
            return softmax_sum.softmax_resmul_rowsum(y, self.scale_factor, MAX_FEATURES)
        except RuntimeError:
            p = torch.softmax(y * self.scale_factor, dim=1)
            return torch.sum(p * y, dim=1, keepdim=True)
