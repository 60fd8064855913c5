import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Custom CUDA kernel for ReLU: float4 vectorised loads/stores with a grid-stride loop,
# plus a scalar tail loop for element counts that are not a multiple of 4.
relu_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void relu_vec4_kernel(const float4* __restrict__ in, float4* __restrict__ out, int64_t n_vec) {
    int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = idx; i < n_vec; i += stride) {
        float4 v = in[i];
        v.x = fmaxf(v.x, 0.0f);
        v.y = fmaxf(v.y, 0.0f);
        v.z = fmaxf(v.z, 0.0f);
        v.w = fmaxf(v.w, 0.0f);
        out[i] = v;
    }
}

__global__ void relu_tail_kernel(const float* __restrict__ in, float* __restrict__ out, int64_t start, int64_t n) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fmaxf(in[i], 0.0f);
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "x must be float32");
    auto input = x.contiguous();
    auto output = torch::empty_like(input);
    const int64_t n = input.numel();
    if (n == 0) return output;

    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;
    const int64_t n_vec = n / 4;
    // float4 access needs 16-byte alignment; fresh allocations from the caching allocator have it.
    const bool aligned = (reinterpret_cast<uintptr_t>(input.data_ptr<float>()) % 16 == 0) &&
                         (reinterpret_cast<uintptr_t>(output.data_ptr<float>()) % 16 == 0);
    int64_t done = 0;
    if (aligned && n_vec > 0) {
        int sm_count = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
        int64_t blocks = std::min<int64_t>((n_vec + threads - 1) / threads, (int64_t)sm_count * 8);
        relu_vec4_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(input.data_ptr<float>()),
            reinterpret_cast<float4*>(output.data_ptr<float>()), n_vec);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
        done = n_vec * 4;
    }
    if (done < n) {
        int64_t rest = n - done;
        relu_tail_kernel<<<(unsigned)((rest + threads - 1) / threads), threads, 0, stream>>>(
            input.data_ptr<float>(), output.data_ptr<float>(), done, n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return output;
}
"""

relu_cpp_source = "torch::Tensor relu_forward(torch::Tensor x);"

relu_ext = load_inline(
    name="kbcorpus_l1_relu_vec4",
    cpp_sources=relu_cpp_source,
    cuda_sources=relu_cuda_source,
    functions=["relu_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu_ext = relu_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu_ext.relu_forward(x)
