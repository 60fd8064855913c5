# Published-style solution for tasks/level1/030_elu.py: ELU kernel replayed from a CUDA graph captured
# on a private stream (warm-up there, capture with torch.cuda.graph(stream=...)); input copied into
# the static buffer, output cloned. Expected: kernelbench/strict OK by the numbers; the static stream
# rule of src/compile/python_scan.cpp refuses torch.cuda.Stream (REJECTED at f3794f0).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

elu_kernel_source = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__device__ __forceinline__ float elu_op(float x, float p) {
    return x > 0.0f ? x : p * expm1f(x);
}

__global__ void elu_vec4_kernel(const float4* __restrict__ in, float4* __restrict__ out, int64_t n4, float p) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
        float4 v = in[i];
        v.x = elu_op(v.x, p);
        v.y = elu_op(v.y, p);
        v.z = elu_op(v.z, p);
        v.w = elu_op(v.w, p);
        out[i] = v;
    }
}

__global__ void elu_tail_kernel(const float* __restrict__ in, float* __restrict__ out, int64_t start, int64_t n, float p) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = elu_op(in[i], p);
}

void elu_launch(const float* in, float* out, int64_t n, float p, cudaStream_t stream) {
    const int threads = 256;
    const int64_t n4 = n / 4;
    if (n4 > 0) {
        int64_t blocks = (n4 + threads - 1) / threads;
        if (blocks > 4096) blocks = 4096;
        elu_vec4_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), n4, p);
    }
    const int64_t rest = n - n4 * 4;
    if (rest > 0) elu_tail_kernel<<<(unsigned)((rest + threads - 1) / threads), threads, 0, stream>>>(in, out, n4 * 4, n, p);
}
"""

elu_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void elu_launch(const float* in, float* out, int64_t n, float p, cudaStream_t stream);

void elu_out(torch::Tensor x, torch::Tensor out, double alpha) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32, "x");
    TORCH_CHECK(out.is_contiguous() && out.numel() == x.numel(), "out");
    if (x.numel() == 0) return;
    elu_launch(x.data_ptr<float>(), out.data_ptr<float>(), x.numel(), (float)alpha, at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""

elu_ext = load_inline(
    name="audit_pub_l1_030_elu",
    cpp_sources="void elu_out(torch::Tensor x, torch::Tensor out, double alpha);",
    cuda_sources=[elu_kernel_source, elu_wrapper_source],
    functions=["elu_out"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha
        self.graph = None
        self.shape = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.graph is None or self.shape != x.shape:
            self.shape = x.shape
            self.static_x = x.detach().clone().contiguous()
            self.static_y = torch.empty_like(self.static_x)
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                elu_ext.elu_out(self.static_x, self.static_y, self.alpha)
            torch.cuda.current_stream().wait_stream(side)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph, stream=side):
                elu_ext.elu_out(self.static_x, self.static_y, self.alpha)
        self.static_x.copy_(x)
        self.graph.replay()
        return self.static_y.clone()
