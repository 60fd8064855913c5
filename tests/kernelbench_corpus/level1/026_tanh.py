import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# tanh is elementwise, so --use_fast_math is safe here: at worst tanhf becomes the
# hardware approximation (relative error about 2^-11), far inside the float32 tolerance.
tanh_kernel_code = r"""
#include <torch/extension.h>

__global__ void __launch_bounds__(256) tanh_fwd(const float* __restrict__ x, float* __restrict__ y, long long n) {
    long long i = (long long)blockIdx.x * 256 + threadIdx.x;
    if (i < n) {
        y[i] = tanhf(x[i]);
    }
}

at::Tensor tanh_forward(const at::Tensor& x) {
    TORCH_CHECK(x.device().is_cuda(), "tanh_forward: x must live on the GPU");
    TORCH_CHECK(x.dtype() == at::kFloat, "tanh_forward: float32 expected");
    at::Tensor xc = x.contiguous();
    at::Tensor y = at::empty_like(xc);
    long long n = xc.numel();
    if (n > 0) {
        long long grid = (n + 255) / 256;
        tanh_fwd<<<(unsigned int)grid, 256>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
        auto status = cudaGetLastError();
        TORCH_CHECK(status == cudaSuccess, "tanh_fwd failed: ", cudaGetErrorString(status));
    }
    return y;
}
"""

tanh_cpp_decl = "at::Tensor tanh_forward(const at::Tensor& x);"

tanh_mod = load_inline(
    name="kbcorpus_l1_tanh_fastmath",
    cpp_sources=tanh_cpp_decl,
    cuda_sources=tanh_kernel_code,
    functions=["tanh_forward"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x):
        return tanh_mod.tanh_forward(x)
