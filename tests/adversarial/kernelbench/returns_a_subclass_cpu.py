# expect: REJECTED
# Adversarial (kernelbench, CPU): returns its (correct) result as an instance of a torch.Tensor
# subclass made with type() at run time, which the static rule on `class X(torch.Tensor)` does not
# see. A subclass can compute its value only when the checker reads it (a lazy output, outside the
# timed call); caught at run time: every output must be exactly a torch.Tensor (issue 16). Listed
# under the kernelbench rules: under strict, the operator audit's own dispatch mode already makes
# creating the subclass fail (RUNTIME_ERROR), which would not exercise the type check.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

copy_cpp = r"""
#include <torch/extension.h>

torch::Tensor softmax_copy(torch::Tensor x) {
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t rows = x.size(0), cols = x.size(1);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        float m = -INFINITY, s = 0.f;
        for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, in[r * cols + c]);
        for (int64_t c = 0; c < cols; ++c) s += (out[r * cols + c] = std::exp(in[r * cols + c] - m));
        for (int64_t c = 0; c < cols; ++c) out[r * cols + c] /= s;
    }
    return y;
}
"""

ext = load_inline(name="kernelrl_adv_returns_a_subclass", cpp_sources=copy_cpp, functions=["softmax_copy"])
Wrapped = type("Wrapped", (torch.Tensor,), {})


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.softmax_copy(x).as_subclass(Wrapped)
