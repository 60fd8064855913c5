# Published-style solution for tasks/level1/038_logsigmoid.py: stable log-sigmoid
# min(x, 0) - log1p(exp(-|x|)) launched on a private stream that waits for the current stream and is
# waited for before returning (correct ordering). Expected by the numbers: OK; the static stream rule
# (torch.cuda.Stream) refuses it (REJECTED at f3794f0).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

logsig_kernel_source = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__device__ __forceinline__ float logsig_op(float x) {
    return fminf(x, 0.0f) - log1pf(expf(-fabsf(x)));
}

__global__ void logsig_vec4_kernel(const float4* __restrict__ in, float4* __restrict__ out, int64_t n4) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
        float4 v = in[i];
        v.x = logsig_op(v.x);
        v.y = logsig_op(v.y);
        v.z = logsig_op(v.z);
        v.w = logsig_op(v.w);
        out[i] = v;
    }
}

__global__ void logsig_tail_kernel(const float* __restrict__ in, float* __restrict__ out, int64_t start, int64_t n) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = logsig_op(in[i]);
}

void logsig_launch(const float* in, float* out, int64_t n, cudaStream_t stream) {
    const int threads = 256;
    const int64_t n4 = n / 4;
    if (n4 > 0) {
        int64_t blocks = (n4 + threads - 1) / threads;
        if (blocks > 4096) blocks = 4096;
        logsig_vec4_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), n4);
    }
    const int64_t rest = n - n4 * 4;
    if (rest > 0) logsig_tail_kernel<<<(unsigned)((rest + threads - 1) / threads), threads, 0, stream>>>(in, out, n4 * 4, n);
}
"""

logsig_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void logsig_launch(const float* in, float* out, int64_t n, cudaStream_t stream);

torch::Tensor logsig_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "logsig: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "logsig: x must be float32");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    if (xc.numel() == 0) return out;
    logsig_launch(xc.data_ptr<float>(), out.data_ptr<float>(), xc.numel(), at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

logsig_ext = load_inline(
    name="audit_pub_l1_038_logsigmoid",
    cpp_sources="torch::Tensor logsig_forward(torch::Tensor x);",
    cuda_sources=[logsig_kernel_source, logsig_wrapper_source],
    functions=["logsig_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.stream = torch.cuda.Stream()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.stream):
            y = logsig_ext.logsig_forward(x)
        torch.cuda.current_stream().wait_stream(self.stream)
        return y
