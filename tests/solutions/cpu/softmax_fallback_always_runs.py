# Published-style CPU solution whose own kernel only takes one row at a time, so for the task's
# 2-D input it raises on every call and the try/except falls back to PyTorch: the output is right,
# but PyTorch computed it. Expected: strict and kernelbench REJECTED (try/except, statically);
# observe OK with every call running PyTorch compute (its fallback ran in every call).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

one_row_source = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor one_row_softmax(torch::Tensor row) {
    TORCH_CHECK(row.dim() == 1, "one_row_softmax takes one row, got ", row.dim(), " dimensions");
    auto y = torch::empty_like(row);
    float* out = y.data_ptr<float>();
    const float* in = row.data_ptr<float>();
    double total = 0.0;
    for (int64_t j = 0; j < row.numel(); ++j) total += (out[j] = std::exp(in[j]));
    for (int64_t j = 0; j < row.numel(); ++j) out[j] = static_cast<float>(out[j] / total);
    return y;
}
"""

ext = load_inline(
    name="audit_cpu_softmax_always",
    cpp_sources=one_row_source,
    functions=["one_row_softmax"],
    extra_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        try:
            return ext.one_row_softmax(x)
        except RuntimeError:
            return torch.softmax(x, dim=1)
