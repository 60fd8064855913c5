#!/usr/bin/env python3
"""Writes N distinct elementwise-add kernels for bench/ in two formats with the same CUDA kernel:
native (.cu, kernelrl ABI) and kernelbench (.py, ModelNew + load_inline), plus batch files.
The variants differ in block size, elements per thread, float4 loads and launch bounds, so every
source is distinct (no compile-cache hits) and every kernel is correct.

usage: make_candidates.py OUT_DIR [N] [N_KERNELBENCH]   (kernelbench.json lists the first N_KERNELBENCH)"""
import itertools
import json
import os
import sys

KERNEL = r"""
#define BLOCK {block}
#define PER_THREAD {per_thread}
#define USE_VEC4 {vec4}

__global__ void {launch_bounds} vadd_{i}(const float* __restrict__ a, const float* __restrict__ b,
                                        float* __restrict__ c, long long n) {{
#if USE_VEC4
  long long n4 = n / 4;
  long long base = ((long long)blockIdx.x * BLOCK + threadIdx.x) * PER_THREAD;
  long long stride = (long long)gridDim.x * BLOCK * PER_THREAD;
  for (long long j = base; j < n4; j += stride) {{
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {{
      long long q = j + k;
      if (q < n4) {{
        float4 x = reinterpret_cast<const float4*>(a)[q];
        float4 y = reinterpret_cast<const float4*>(b)[q];
        reinterpret_cast<float4*>(c)[q] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
      }}
    }}
  }}
  for (long long q = n4 * 4 + (long long)blockIdx.x * BLOCK + threadIdx.x; q < n; q += (long long)gridDim.x * BLOCK)
    c[q] = a[q] + b[q];
#else
  long long stride = (long long)gridDim.x * BLOCK;
  for (long long j = (long long)blockIdx.x * BLOCK + threadIdx.x; j < n; j += stride * PER_THREAD) {{
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {{
      long long q = j + k * stride;
      if (q < n) c[q] = a[q] + b[q];
    }}
  }}
#endif
}}

static unsigned vadd_{i}_blocks(long long n) {{
  long long per_block = (long long)BLOCK * PER_THREAD * (USE_VEC4 ? 4 : 1);
  long long blocks = (n + per_block - 1) / per_block;
  return (unsigned)(blocks < 65535 * 16 ? blocks : 65535 * 16);
}}
"""

NATIVE = r"""// bench variant {i}: elementwise add, block {block}, {per_thread} per thread, vec4 {vec4}
#include <kernelrl/abi.h>
#include <cuda_runtime.h>
{kernel}
extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params, int n_params,
                                DLTensor* outputs, int n_outputs, void* stream) {{
  if (n_inputs != 2 || n_outputs != 1) return 1;
  long long n = kernelrl_numel(&inputs[0]);
  vadd_{i}<<<vadd_{i}_blocks(n), BLOCK, 0, (cudaStream_t)stream>>>(
      (const float*)inputs[0].data, (const float*)inputs[1].data, (float*)outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}}
"""

KERNELBENCH = r'''# bench variant {i} in KernelBench format: the same kernel through load_inline
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
{kernel}
torch::Tensor vadd_forward(torch::Tensor a, torch::Tensor b) {{
  auto c = torch::empty_like(a);
  long long n = a.numel();
  vadd_{i}<<<vadd_{i}_blocks(n), BLOCK>>>(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), n);
  return c;
}}
"""

cpp_source = "torch::Tensor vadd_forward(torch::Tensor a, torch::Tensor b);"

vadd = load_inline(name="bench_vadd_{i}", cpp_sources=cpp_source, cuda_sources=cuda_source,
                   functions=["vadd_forward"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return vadd.vadd_forward(a.contiguous(), b.contiguous())
'''


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    n_kb = int(sys.argv[3]) if len(sys.argv) > 3 else n
    task = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "examples", "vector_add", "task.py"))
    os.makedirs(out, exist_ok=True)
    combos = list(itertools.product([128, 256, 512, 1024], [1, 2, 4, 8], [0, 1], [0, 1]))[:n]
    native, kb = [], []
    for i, (block, per_thread, vec4, lb) in enumerate(combos):
        bounds = f"__launch_bounds__({block})" if lb else ""
        kernel = KERNEL.format(i=i, block=block, per_thread=per_thread, vec4=vec4, launch_bounds=bounds)
        args = dict(i=i, block=block, per_thread=per_thread, vec4=vec4, kernel=kernel)
        cu = os.path.join(out, f"vadd_{i:03d}.cu")
        py = os.path.join(out, f"vadd_{i:03d}.py")
        with open(cu, "w") as f:
            f.write(NATIVE.format(**args))
        with open(py, "w") as f:
            f.write(KERNELBENCH.format(**args))
        native.append({"task": task, "candidate": os.path.abspath(cu), "format": "native"})
        kb.append({"task": task, "candidate": os.path.abspath(py), "format": "kernelbench"})
    with open(os.path.join(out, "native.json"), "w") as f:
        json.dump(native, f, indent=1)
    with open(os.path.join(out, "kernelbench.json"), "w") as f:
        json.dump(kb[:n_kb], f, indent=1)
    print(f"wrote {len(combos)} variants to {out}")


if __name__ == "__main__":
    main()
