# expect: OK
# Ladder (kernelbench, CPU): a correct row softmax in C++ through load_inline (cpp_sources only).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_cpp_source = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor softmax_rows_cpu(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 2 && x.scalar_type() == torch::kFloat32, "expected a 2-D float32 tensor");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t rows = x.size(0), cols = x.size(1);
    const float* px = x.data_ptr<float>();
    float* py = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = px + r * cols;
        float* yr = py + r * cols;
        float m = -INFINITY, s = 0.f;
        for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, xr[c]);
        for (int64_t c = 0; c < cols; ++c) s += (yr[c] = std::exp(xr[c] - m));
        for (int64_t c = 0; c < cols; ++c) yr[c] /= s;
    }
    return y;
}
"""

softmax_ext = load_inline(
    name="kernelrl_ladder_softmax_cpu",
    cpp_sources=softmax_cpp_source,
    functions=["softmax_rows_cpu"],
    extra_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.softmax_ext = softmax_ext

    def forward(self, x):
        return self.softmax_ext.softmax_rows_cpu(x)
