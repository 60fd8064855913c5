# Published-style solution for tasks/level2/089_linear_subtract_sigmoid_mulinput_sumfeatures.py:
# nn.Linear in PyTorch, then one block per row: sigmoid(y - 0.5) * gate summed over the 4096
# features (warp shuffles + shared memory). Expected: kernelbench OK, strict REJECTED (aten addmm).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

rowsum_kernel_source = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__global__ void sub_sigmoid_gate_rowsum_kernel(const float* __restrict__ y, const float* __restrict__ gate,
                                               float* __restrict__ out, int F, float sub) {
    __shared__ float partial[32];
    const float* yr = y + (int64_t)blockIdx.x * F;
    const float* gr = gate + (int64_t)blockIdx.x * F;
    float s = 0.0f;
    for (int i = threadIdx.x; i < F; i += blockDim.x) s += gr[i] / (1.0f + expf(-(yr[i] - sub)));
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) partial[warp] = s;
    __syncthreads();
    if (warp == 0) {
        s = lane < (int)(blockDim.x >> 5) ? partial[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
        if (lane == 0) out[blockIdx.x] = s;
    }
}

void sub_sigmoid_gate_rowsum_launch(const float* y, const float* gate, float* out, int rows, int F, float sub,
                                    cudaStream_t stream) {
    if (rows == 0) return;
    sub_sigmoid_gate_rowsum_kernel<<<rows, 256, 0, stream>>>(y, gate, out, F, sub);
}
"""

rowsum_wrapper_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void sub_sigmoid_gate_rowsum_launch(const float* y, const float* gate, float* out, int rows, int F, float sub,
                                    cudaStream_t stream);

torch::Tensor sub_sigmoid_gate_rowsum(torch::Tensor y, torch::Tensor gate, double sub) {
    TORCH_CHECK(y.dim() == 2 && y.sizes() == gate.sizes(), "y and gate: same (rows, F) shape");
    auto yc = y.contiguous();
    auto gc = gate.contiguous();
    auto out = torch::empty({yc.size(0), 1}, yc.options());
    sub_sigmoid_gate_rowsum_launch(yc.data_ptr<float>(), gc.data_ptr<float>(), out.data_ptr<float>(),
                                   (int)yc.size(0), (int)yc.size(1), (float)sub, at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

rowsum = load_inline(
    name="audit_pub_l2_089_sub_sigmoid_gate_rowsum",
    cpp_sources="torch::Tensor sub_sigmoid_gate_rowsum(torch::Tensor y, torch::Tensor gate, double sub);",
    cuda_sources=[rowsum_kernel_source, rowsum_wrapper_source],
    functions=["sub_sigmoid_gate_rowsum"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, subtract_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value

    def forward(self, x, gate):
        return rowsum.sub_sigmoid_gate_rowsum(self.linear(x), gate, self.subtract_value)
