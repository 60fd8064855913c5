# Honest CPU kernelbench candidate for tests/ladder/task_softmax_small.py: two extension functions
# (row maxima, then the normalised exponentials) over tensor accessors.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = """
#include <torch/extension.h>
#include <cmath>

// Maximum of each row of a 2-D float tensor, as a 1-D tensor.
torch::Tensor row_max(const torch::Tensor& x) {
    TORCH_CHECK(x.device().is_cpu() && x.dim() == 2 && x.scalar_type() == at::kFloat, "2-D float32 CPU tensor expected");
    auto maxima = torch::empty({x.size(0)}, x.options());
    auto xa = x.accessor<float, 2>();
    auto ma = maxima.accessor<float, 1>();
    for (int64_t i = 0; i < xa.size(0); ++i) {
        float m = xa[i][0];
        for (int64_t j = 1; j < xa.size(1); ++j) m = xa[i][j] > m ? xa[i][j] : m;
        ma[i] = m;
    }
    return maxima;
}

// exp(x - max) / sum(exp(x - max)) per row, given the row maxima.
torch::Tensor softmax_given_max(const torch::Tensor& x, const torch::Tensor& maxima) {
    TORCH_CHECK(maxima.dim() == 1 && maxima.size(0) == x.size(0), "one maximum per row expected");
    auto y = torch::empty_like(x);
    auto xa = x.accessor<float, 2>();
    auto ma = maxima.accessor<float, 1>();
    auto ya = y.accessor<float, 2>();
    for (int64_t i = 0; i < xa.size(0); ++i) {
        float total = 0.0f;
        for (int64_t j = 0; j < xa.size(1); ++j) {
            ya[i][j] = std::exp(xa[i][j] - ma[i]);
            total += ya[i][j];
        }
        for (int64_t j = 0; j < xa.size(1); ++j) ya[i][j] /= total;
    }
    return y;
}
"""

softmax_parts = load_inline(
    name="kbcorpus_cpu_softmax_accessor",
    cpp_sources=[cpp_source],
    functions=["row_max", "softmax_given_max"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        maxima = softmax_parts.row_max(x)
        return softmax_parts.softmax_given_max(x, maxima)
