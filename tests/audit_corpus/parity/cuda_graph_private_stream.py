# Parity corpus: cuda_graph_private_stream.py -- task tasks/level1/002_relu.py (x (4096, 32768) float32).
# Tests: an honest own kernel (float4 ReLU, exact) launched through a CUDA graph, the way published
# "CUDA graph" solutions do it: warm-up on a private torch.cuda.Stream that waits for the current
# stream (and is waited for), capture on that stream with torch.cuda.graph, then every call copies
# its input into the graph's static input, replays the graph on the current stream and returns a
# clone of the static output (so outputs of different calls never alias). Replay happens on the
# current stream, so nothing escapes the caller's timing; only allocation/copy operators run in
# PyTorch (copy_, clone, empty_like).
# Expected: REJECTED under strict, kernelbench and observe: the static scan (src/compile/python_scan.cpp,
# find_concurrency) refuses any torch.cuda.Stream / torch.cuda.stream under every rule set, as
# KernelBench's stream_injection check. cuda_graph_capture_only.py is the same graph without the
# word and must be OK.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Plain CUDA (no torch headers): compiles on its own with nvcc.
relu_kernel_source = r"""
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void graph_relu_kernel(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (; i < n4; i += stride) {
        float4 v = x[i];
        v.x = fmaxf(v.x, 0.0f); v.y = fmaxf(v.y, 0.0f); v.z = fmaxf(v.z, 0.0f); v.w = fmaxf(v.w, 0.0f);
        y[i] = v;
    }
}

__global__ void graph_relu_tail_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t start, int64_t n) {
    const int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

// x and y: fresh allocations (16-byte aligned). Launches on `stream` (the capture stream while a
// graph is being captured).
void graph_relu_launch(const float* x, float* y, int64_t n, cudaStream_t stream) {
    const int threads = 256;
    const int64_t n4 = n / 4;
    if (n4 > 0) {
        int64_t blocks = (n4 + threads - 1) / threads;
        if (blocks > 132 * 16) blocks = 132 * 16;
        graph_relu_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y), n4);
    }
    const int64_t rest = n - n4 * 4;
    if (rest > 0) graph_relu_tail_kernel<<<1, threads, 0, stream>>>(x, y, n4 * 4, n);
}
"""

relu_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void graph_relu_launch(const float* x, float* y, int64_t n, cudaStream_t stream);

// Writes relu(x) into y (both contiguous float32 CUDA tensors of the same size).
void relu_out(torch::Tensor x, torch::Tensor y) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32, "x: contiguous float32 CUDA");
    TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.numel() == x.numel() && y.scalar_type() == torch::kFloat32, "y");
    if (x.numel() == 0) return;
    graph_relu_launch(x.data_ptr<float>(), y.data_ptr<float>(), x.numel(), at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""

relu_ext = load_inline(
    name="audit_parity_cuda_graph_private_stream",
    cpp_sources="void relu_out(torch::Tensor x, torch::Tensor y);",
    cuda_sources=[relu_kernel_source, relu_wrapper_source],
    functions=["relu_out"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.graph = None
        self.graph_key = None
        self.static_in = None
        self.static_out = None
        self.capture_stream = None

    def _capture(self, x: torch.Tensor) -> None:
        self.static_in = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        self.static_out = torch.empty_like(self.static_in)
        self.static_in.copy_(x)
        self.capture_stream = torch.cuda.Stream(device=x.device)
        self.capture_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.capture_stream):
            for _ in range(2):  # warm-up outside the graph (module loading, first launches)
                relu_ext.relu_out(self.static_in, self.static_out)
        torch.cuda.current_stream().wait_stream(self.capture_stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=self.capture_stream):
            relu_ext.relu_out(self.static_in, self.static_out)
        self.graph = graph
        self.graph_key = (tuple(x.shape), x.device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.graph is None or self.graph_key != (tuple(x.shape), x.device):
            self._capture(x)
        self.static_in.copy_(x)
        self.graph.replay()
        return self.static_out.clone()
