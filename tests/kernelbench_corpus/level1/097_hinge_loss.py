import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

hinge_cuda_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

#define BLOCK_SIZE 512

// Sums max(0, 1 - p * t) over all elements: shared-memory tree reduction per block,
// one double atomicAdd per block into the accumulator.
__global__ void hinge_sum_kernel(const float* __restrict__ pred, const float* __restrict__ target,
                                 double* __restrict__ acc, long long n) {
    __shared__ float cache[BLOCK_SIZE];
    int tid = threadIdx.x;
    long long i = (long long)blockIdx.x * blockDim.x + tid;
    long long step = (long long)blockDim.x * gridDim.x;
    float sum = 0.0f;
    while (i < n) {
        float h = 1.0f - pred[i] * target[i];
        sum += h > 0.0f ? h : 0.0f;
        i += step;
    }
    cache[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) cache[tid] += cache[tid + s];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(acc, (double)cache[0]);
}

__global__ void divide_kernel(const double* __restrict__ acc, float* __restrict__ out, double n) {
    out[0] = (float)(acc[0] / n);
}

// Returns a 1-element float64 tensor holding the sum of the hinge terms.
torch::Tensor hinge_sum(torch::Tensor pred, torch::Tensor target) {
    TORCH_CHECK(pred.is_cuda() && target.is_cuda(), "CUDA tensors required");
    TORCH_CHECK(pred.numel() == target.numel(), "size mismatch");
    TORCH_CHECK(pred.scalar_type() == torch::kFloat && target.scalar_type() == torch::kFloat, "float32 required");
    pred = pred.contiguous();
    target = target.contiguous();
    auto acc = torch::zeros({1}, pred.options().dtype(torch::kFloat64));
    long long n = pred.numel();
    int device = pred.get_device();
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    int blocks = sms * 4;
    hinge_sum_kernel<<<blocks, BLOCK_SIZE>>>(pred.data_ptr<float>(), target.data_ptr<float>(),
                                             acc.data_ptr<double>(), n);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "hinge_sum_kernel: ", cudaGetErrorString(err));
    return acc;
}

// Turns the accumulated sum into the mean, as a 0-dim float32 tensor.
torch::Tensor finalize_mean(torch::Tensor acc, int64_t n) {
    auto out = torch::empty({}, acc.options().dtype(torch::kFloat32));
    divide_kernel<<<1, 1>>>(acc.data_ptr<double>(), out.data_ptr<float>(), (double)n);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "divide_kernel: ", cudaGetErrorString(err));
    return out;
}
"""

hinge_cpp_source = """
torch::Tensor hinge_sum(torch::Tensor pred, torch::Tensor target);
torch::Tensor finalize_mean(torch::Tensor acc, int64_t n);
"""

hinge_loss_cuda = load_inline(
    name="kbcorpus_l1_hinge_loss",
    cpp_sources=hinge_cpp_source,
    cuda_sources=hinge_cuda_source,
    functions=["hinge_sum", "finalize_mean"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        total = hinge_loss_cuda.hinge_sum(predictions, targets)
        return hinge_loss_cuda.finalize_mean(total, predictions.numel())
