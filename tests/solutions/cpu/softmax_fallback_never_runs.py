# Published-style CPU solution (as LLMs write them) for a row softmax over dim=1 of a 2-D float32
# input: its own C++ kernel, called inside try/except with a PyTorch fallback that such inputs never
# reach. Expected: strict and kernelbench REJECTED (try/except, statically); observe OK with no call
# running PyTorch compute (its fallback never ran).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

row_softmax_source = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor row_softmax(torch::Tensor input) {
    TORCH_CHECK(input.dim() == 2 && input.scalar_type() == torch::kFloat32, "2-D float32 input expected");
    auto x = input.contiguous();
    auto out = torch::empty_like(x);
    auto xa = x.accessor<float, 2>();
    auto oa = out.accessor<float, 2>();
    for (int64_t i = 0; i < x.size(0); ++i) {
        float peak = xa[i][0];
        for (int64_t j = 1; j < x.size(1); ++j) peak = std::fmax(peak, xa[i][j]);
        float total = 0.f;
        for (int64_t j = 0; j < x.size(1); ++j) {
            oa[i][j] = std::exp(xa[i][j] - peak);
            total += oa[i][j];
        }
        for (int64_t j = 0; j < x.size(1); ++j) oa[i][j] /= total;
    }
    return out;
}
"""

ext = load_inline(
    name="audit_cpu_softmax_never",
    cpp_sources=row_softmax_source,
    functions=["row_softmax"],
    extra_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        try:
            return ext.row_softmax(x)
        except RuntimeError:
            return torch.softmax(x, dim=1)
