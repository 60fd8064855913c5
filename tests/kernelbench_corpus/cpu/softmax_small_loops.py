# Honest CPU kernelbench candidate for tests/ladder/task_softmax_small.py: row softmax in plain C++ loops.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_cpu_source = r"""
#include <torch/extension.h>
#include <cmath>
#include <limits>

torch::Tensor softmax_rows_cpu(torch::Tensor x) {
    TORCH_CHECK(!x.is_cuda(), "x must be a CPU tensor");
    TORCH_CHECK(x.dim() == 2, "x must be 2-D");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t rows = x.size(0), cols = x.size(1);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = in + r * cols;
        float* yr = out + r * cols;
        float mx = -std::numeric_limits<float>::infinity();
        for (int64_t c = 0; c < cols; ++c) mx = std::max(mx, xr[c]);
        double sum = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
            const float e = std::exp(xr[c] - mx);
            yr[c] = e;
            sum += e;
        }
        const float inv = static_cast<float>(1.0 / sum);
        for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
    }
    return y;
}
"""

softmax_cpu = load_inline(
    name="kbcorpus_cpu_softmax_loops",
    cpp_sources=softmax_cpu_source,
    functions=["softmax_rows_cpu"],
    extra_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax_cpu.softmax_rows_cpu(x)
