#!/usr/bin/env python3
"""Writes tasks/starter/: single-operator tasks of one shape where a small model can succeed.

usage: python3 scripts/make_starter_tasks.py [ROOT]   (default: the repository; rerun after editing OPS)

Writes ROOT/tasks/starter/ (the tasks and their manifest) and ROOT/tasks/fixtures/starter/ (a correct
native and host solution of each, and a batch file: `kernelrl eval --batch
tasks/fixtures/starter/manifest.json --check-expect`; they are also the source of the supervised
warm start's correct kernels).

Every task takes float32 tensors of one shape, (ROWS, COLS) = (8192, 16384): 512 MB each, so even
the lightest (a row reduction reading one tensor) moves enough memory for >= 0.1 ms of eager time on
an H200. Four kinds: unary element-wise ops, activations with parameters given at construction,
binary element-wise ops, and reductions along each row. The split is by operator: the `test` ops
(held out) never appear in training data (issue 22: supervised warm start and RL on `train` only).
The small size (CPU runs) is (64, 4096).
"""
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROWS, COLS = 8192, 16384
SMALL = {"rows": 64, "cols": 4096}


@dataclass
class Op:
    name: str
    kind: str  # unary, param, binary, reduction
    expr: str  # the forward's return expression; x (and y); self.<param> for parameters
    doc: str
    split: str = "train"
    params: dict = field(default_factory=dict)  # name -> value, in get_init_inputs() order
    y_positive: bool = False  # binary: y drawn in [0.5, 1.5) (a divisor)
    # The same in C (CUDA device code and host C++) for the fixtures: element-wise, an expression of
    # v (x's element) and w (y's); a reduction, "init|step(acc, v)|combine(a, b)|final(acc, n)", or
    # "logsumexp" (max, then the sum of exp(v - max)).
    c: str = ""


OPS = [
    # Unary element-wise.
    Op("abs", "unary", "torch.abs(x)", "absolute value", c="fabsf(v)"),
    Op("neg", "unary", "torch.neg(x)", "negation", c="-v"),
    Op("square", "unary", "x * x", "square", c="v * v"),
    Op("exp", "unary", "torch.exp(x)", "exponential", c="expf(v)"),
    Op("sin", "unary", "torch.sin(x)", "sine", split="test", c="sinf(v)"),
    Op("cos", "unary", "torch.cos(x)", "cosine", c="cosf(v)"),
    Op("tanh", "unary", "torch.tanh(x)", "hyperbolic tangent", c="tanhf(v)"),
    Op("sigmoid", "unary", "torch.sigmoid(x)", "logistic sigmoid", c="1.f / (1.f + expf(-v))"),
    Op("relu", "unary", "torch.relu(x)", "ReLU", c="v > 0.f ? v : 0.f"),
    Op("relu6", "unary", "F.relu6(x)", "ReLU6: min(max(x, 0), 6)", c="fminf(fmaxf(v, 0.f), 6.f)"),
    Op("gelu_tanh", "unary", "F.gelu(x, approximate='tanh')", "GELU, tanh approximation", c="0.5f * v * (1.f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)))"),
    Op("silu", "unary", "F.silu(x)", "SiLU: x * sigmoid(x)", c="v / (1.f + expf(-v))"),
    Op("softsign", "unary", "F.softsign(x)", "softsign: x / (1 + |x|)", split="test", c="v / (1.f + fabsf(v))"),
    Op("mish", "unary", "F.mish(x)", "Mish: x * tanh(softplus(x))", split="test", c="v * tanhf(log1pf(expf(v)))"),
    Op("hardswish", "unary", "F.hardswish(x)", "hard swish", c="v * fminf(fmaxf(v + 3.f, 0.f), 6.f) / 6.f"),
    Op("erf", "unary", "torch.erf(x)", "error function", c="erff(v)"),
    Op("atan", "unary", "torch.atan(x)", "arctangent", split="test", c="atanf(v)"),
    Op("expm1", "unary", "torch.expm1(x)", "exp(x) - 1", split="test", c="expm1f(v)"),
    Op("log1p_abs", "unary", "torch.log1p(torch.abs(x))", "log(1 + |x|)", c="log1pf(fabsf(v))"),
    Op("rsqrt_1p_square", "unary", "torch.rsqrt(1 + x * x)", "1 / sqrt(1 + x^2)", c="1.f / sqrtf(1.f + v * v)"),
    Op("sign", "unary", "torch.sign(x)", "sign (-1, 0 or 1)", c="(float)((v > 0.f) - (v < 0.f))"),
    Op("logsigmoid", "unary", "F.logsigmoid(x)", "log(sigmoid(x))", c="fminf(v, 0.f) - log1pf(expf(-fabsf(v)))"),
    # Activations with parameters given at construction.
    Op("leaky_relu", "param", "F.leaky_relu(x, negative_slope=self.negative_slope)", "leaky ReLU",
       params={"negative_slope": 0.2}, c="v > 0.f ? v : 0.2f * v"),
    Op("elu", "param", "F.elu(x, alpha=self.alpha)", "ELU", params={"alpha": 0.5}, c="v > 0.f ? v : 0.5f * expm1f(v)"),
    Op("celu", "param", "F.celu(x, alpha=self.alpha)", "CELU", split="test", params={"alpha": 1.5}, c="fmaxf(v, 0.f) + fminf(0.f, 1.5f * expm1f(v / 1.5f))"),
    Op("hardtanh", "param", "F.hardtanh(x, min_val=self.min_val, max_val=self.max_val)", "hardtanh",
       split="test", params={"min_val": -2.0, "max_val": 2.0}, c="fminf(fmaxf(v, -2.f), 2.f)"),
    Op("softplus", "param", "F.softplus(x, beta=self.beta, threshold=self.threshold)", "softplus",
       params={"beta": 2.0, "threshold": 10.0}, c="2.f * v > 10.f ? v : log1pf(expf(2.f * v)) / 2.f"),
    Op("clamp", "param", "torch.clamp(x, min=self.low, max=self.high)", "clamp to [low, high]",
       params={"low": -0.5, "high": 0.75}, c="fminf(fmaxf(v, -0.5f), 0.75f)"),
    Op("threshold", "param", "F.threshold(x, self.threshold, self.value)",
       "threshold: x where x > threshold, else value", params={"threshold": 0.1, "value": -1.0}, c="v > 0.1f ? v : -1.f"),
    Op("scale_shift", "param", "x * self.scale + self.shift", "x * scale + shift", params={"scale": 1.7, "shift": -0.3}, c="v * 1.7f - 0.3f"),
    Op("pow_abs", "param", "torch.pow(torch.abs(x), self.exponent)", "|x| ** exponent", split="test",
       params={"exponent": 1.5}, c="powf(fabsf(v), 1.5f)"),
    # Binary element-wise, two tensors of the same shape.
    Op("add", "binary", "x + y", "sum", c="v + w"),
    Op("sub", "binary", "x - y", "difference", c="v - w"),
    Op("mul", "binary", "x * y", "product", c="v * w"),
    Op("div", "binary", "x / y", "quotient (y in [0.5, 1.5))", y_positive=True, c="v / w"),
    Op("maximum", "binary", "torch.maximum(x, y)", "element-wise maximum", c="fmaxf(v, w)"),
    Op("minimum", "binary", "torch.minimum(x, y)", "element-wise minimum", split="test", c="fminf(v, w)"),
    Op("hypot", "binary", "torch.hypot(x, y)", "sqrt(x^2 + y^2)", split="test", c="hypotf(v, w)"),
    Op("atan2", "binary", "torch.atan2(x, y)", "atan2(x, y)", c="atan2f(v, w)"),
    Op("squared_diff", "binary", "(x - y) * (x - y)", "squared difference", c="(v - w) * (v - w)"),
    Op("lerp", "binary", "torch.lerp(x, y, self.weight)", "x + weight * (y - x)", params={"weight": 0.3}, c="v + 0.3f * (w - v)"),
    # Reductions along each row (dim 1), one value per row.
    Op("row_sum", "reduction", "torch.sum(x, dim=1)", "sum of each row",
       c="0.f|acc + v|a + b|acc"),
    Op("row_mean", "reduction", "torch.mean(x, dim=1)", "mean of each row",
       c="0.f|acc + v|a + b|acc / (float)n"),
    Op("row_max", "reduction", "torch.amax(x, dim=1)", "maximum of each row",
       c="-INFINITY|fmaxf(acc, v)|fmaxf(a, b)|acc"),
    Op("row_min", "reduction", "torch.amin(x, dim=1)", "minimum of each row", split="test",
       c="INFINITY|fminf(acc, v)|fminf(a, b)|acc"),
    Op("row_sum_squares", "reduction", "torch.sum(x * x, dim=1)", "sum of squares of each row",
       c="0.f|acc + v * v|a + b|acc"),
    Op("row_abs_max", "reduction", "torch.amax(torch.abs(x), dim=1)", "largest |x| of each row",
       c="0.f|fmaxf(acc, fabsf(v))|fmaxf(a, b)|acc"),
    Op("row_l2_norm", "reduction", "torch.linalg.vector_norm(x, dim=1)", "Euclidean norm of each row", split="test",
       c="0.f|acc + v * v|a + b|sqrtf(acc)"),
    Op("row_logsumexp", "reduction", "torch.logsumexp(x, dim=1)", "log-sum-exp of each row", split="test",
       c="logsumexp"),
]

FAMILY = {"unary": "elementwise", "param": "activation", "binary": "elementwise", "reduction": "reduction"}


def task_source(number: int, op: Op) -> str:
    inputs = "x, y" if op.kind == "binary" else "x"
    shape = f"({ROWS}, {COLS})"
    what = {"unary": f"element-wise {op.doc}", "param": f"element-wise {op.doc}",
            "binary": f"element-wise {op.doc} of two tensors", "reduction": op.doc}[op.kind]
    params = ", ".join(f"{k} = {v}" for k, v in op.params.items())
    head = f"# Starter task {number:03d}: {what} on {shape} float32" + (f" ({params})" if params else "") + ".\n"
    lines = [head.rstrip("\n"), "import torch", "import torch.nn as nn", "import torch.nn.functional as F", "",
             f"rows = {ROWS}", f"cols = {COLS}"]
    lines += [f"{k} = {v}" for k, v in op.params.items()]
    lines += ["", "", "class Model(nn.Module):", f'    """{what[0].upper() + what[1:]}."""', ""]
    args = "".join(f", {k}: float" for k in op.params)
    lines.append(f"    def __init__(self{args}):")
    lines.append("        super().__init__()")
    lines += [f"        self.{k} = {k}" for k in op.params]
    lines.append("")
    sig = ", ".join(f"{n}: torch.Tensor" for n in inputs.split(", "))
    lines.append(f"    def forward(self, {sig}) -> torch.Tensor:")
    lines.append(f"        return {op.expr}")
    lines += ["", "", "def get_inputs():", "    x = torch.randn(rows, cols)"]
    if op.kind == "binary":
        lines.append("    y = torch.rand(rows, cols) + 0.5" if op.y_positive else "    y = torch.randn(rows, cols)")
    lines.append(f"    return [{inputs}]")
    lines += ["", "", "def get_init_inputs():", f"    return [{', '.join(op.params)}]", ""]
    return "\n".join(lines)


def manifest_entry(number: int, op: Op) -> dict:
    n = ROWS * COLS
    n_in = 2 if op.kind == "binary" else 1
    out = ROWS if op.kind == "reduction" else n
    params = ", ".join(f"{v}" for v in op.params.values())
    return {"file": f"{number:03d}_{op.name}.py", "split": op.split, "families": [FAMILY[op.kind]],
            "flops": n, "min_bytes": 4 * (n_in * n + out), "dtype": "float32",
            "note": f"{op.name}" + (f"({params})" if params else "") + f", ({ROWS}, {COLS})",
            "sizes": {"small": dict(SMALL)}}


CHECKS = """static bool is_f32(const DLTensor& t) { return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1; }
"""


def fixture_head(number: int, op: Op, where: str, approach: str) -> str:
    return (f"// {where} fixture for tasks/starter/{number:03d}_{op.name}.py: {op.doc}.\n"
            f"// Approach: {approach}. Written by scripts/make_starter_tasks.py.\n"
            "#include <kernelrl/abi.h>\n")


def native_fixture(number: int, op: Op) -> str:
    binary = op.kind == "binary"
    if op.kind != "reduction":
        args = "const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out, int64_t n" if binary \
            else "const float* __restrict__ x, float* __restrict__ out, int64_t n"
        load = "    const float v = x[i];\n" + ("    const float w = y[i];\n" if binary else "")
        ins = "(const float*)inputs[0].data, (const float*)inputs[1].data" if binary else "(const float*)inputs[0].data"
        return (fixture_head(number, op, "Native", "grid-stride element-wise kernel, 256 threads, at most 16 blocks per SM") +
                "#include <cuda_runtime.h>\n#include <math.h>\n#include <stdint.h>\n\n"
                f"__global__ void elementwise({args}) {{\n"
                "  const int64_t stride = (int64_t)gridDim.x * blockDim.x;\n"
                "  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {\n"
                f"{load}    out[i] = {op.c};\n  }}\n}}\n\n" + CHECKS + "\n"
                "extern \"C\" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,\n"
                "                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {\n"
                "  (void)params; (void)n_params;\n"
                f"  if (n_inputs != {2 if binary else 1} || n_outputs != 1) return 1;\n"
                "  for (int k = 0; k < n_inputs; ++k) if (!is_f32(inputs[k])) return 2;\n"
                "  const int64_t n = kernelrl_numel(&outputs[0]);\n"
                "  if (n == 0) return 0;\n"
                "  int device = 0, sms = 0;\n  cudaGetDevice(&device);\n"
                "  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);\n"
                "  int64_t blocks = (n + 255) / 256;\n"
                "  if (sms > 0 && blocks > (int64_t)sms * 16) blocks = (int64_t)sms * 16;\n"
                f"  elementwise<<<(unsigned)blocks, 256, 0, (cudaStream_t)stream>>>({ins}, (float*)outputs[0].data, n);\n"
                "  return cudaGetLastError() == cudaSuccess ? 0 : 4;\n}\n")
    lse = op.c == "logsumexp"
    if lse:
        body = ("  const float m = block_reduce(local(row, cols, -INFINITY, 0.f, true), true);\n"
                "  const float s = block_reduce(local(row, cols, 0.f, m, false), false);\n"
                "  if (threadIdx.x == 0) out[blockIdx.x] = logf(s) + m;\n")
        helpers = ("// One thread's share of a row: its maximum, or its sum of exp(v - m).\n"
                   "__device__ float local(const float* row, int64_t n, float init, float m, bool max) {\n"
                   "  float acc = init;\n"
                   "  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) acc = max ? fmaxf(acc, row[i]) : acc + expf(row[i] - m);\n"
                   "  return acc;\n}\n\n"
                   "__device__ float combine(float a, float b, bool max) { return max ? fmaxf(a, b) : a + b; }\n\n")
        reduce_sig, call = "float acc, bool max", "combine({a}, {b}, max)"
    else:
        init, step, comb, final = op.c.split("|")
        body = (f"  float acc = {init};\n"
                "  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {\n"
                f"    const float v = row[i];\n    acc = {step};\n  }}\n"
                "  acc = block_reduce(acc);\n"
                f"  if (threadIdx.x == 0) {{\n    const int64_t n = cols;\n    (void)n;\n    out[blockIdx.x] = {final};\n  }}\n")
        helpers = f"__device__ float combine(float a, float b) {{ return {comb}; }}\n\n"
        reduce_sig, call = "float acc", "combine({a}, {b})"
    reduce = (f"// The block's {256 // 32} warps: shuffle within each, then the first warp combines their results.\n"
              f"__device__ float block_reduce({reduce_sig}) {{\n"
              "  __shared__ float warp_results[8];\n"
              "  __shared__ float result;\n"
              "  for (int off = 16; off > 0; off /= 2) acc = " + call.format(a="acc", b="__shfl_down_sync(0xffffffffu, acc, off)") + ";\n"
              "  if (threadIdx.x % 32 == 0) warp_results[threadIdx.x / 32] = acc;\n"
              "  __syncthreads();\n"
              "  if (threadIdx.x == 0) {\n"
              "    float r = warp_results[0];\n"
              "    for (int k = 1; k < 8; ++k) r = " + call.format(a="r", b="warp_results[k]") + ";\n"
              "    result = r;\n  }\n"
              "  __syncthreads();\n"
              "  return result;\n}\n\n")
    return (fixture_head(number, op, "Native", "one 256-thread block per row, warp shuffles then shared memory") +
            "#include <cuda_runtime.h>\n#include <math.h>\n#include <stdint.h>\n\n" + helpers + reduce +
            "__global__ void reduce_rows(const float* __restrict__ x, float* __restrict__ out, int64_t cols) {\n"
            "  const float* row = x + (int64_t)blockIdx.x * cols;\n" + body + "}\n\n" + CHECKS + "\n"
            "extern \"C\" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,\n"
            "                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {\n"
            "  (void)params; (void)n_params;\n"
            "  if (n_inputs != 1 || n_outputs != 1 || !is_f32(inputs[0]) || inputs[0].ndim != 2) return 1;\n"
            "  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];\n"
            "  if (rows == 0) return 0;\n"
            "  if (rows > 0x7fffffff) return 3;\n"
            "  reduce_rows<<<(unsigned)rows, 256, 0, (cudaStream_t)stream>>>((const float*)inputs[0].data, (float*)outputs[0].data, cols);\n"
            "  return cudaGetLastError() == cudaSuccess ? 0 : 4;\n}\n")


def host_fixture(number: int, op: Op) -> str:
    binary = op.kind == "binary"
    tail = "  return 0;\n}\n"
    head = (fixture_head(number, op, "Host (CPU)", "a plain loop" if op.kind != "reduction" else "one pass per row") +
            "#include <math.h>\n\n"
            "extern \"C\" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,\n"
            "                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {\n"
            "  (void)params; (void)n_params; (void)stream;\n")
    if op.kind != "reduction":
        return (head + f"  if (n_inputs != {2 if binary else 1} || n_outputs != 1) return 1;\n"
                "  const float* x = static_cast<const float*>(inputs[0].data);\n" +
                ("  const float* y = static_cast<const float*>(inputs[1].data);\n" if binary else "") +
                "  float* out = static_cast<float*>(outputs[0].data);\n"
                "  const int64_t n = kernelrl_numel(&outputs[0]);\n"
                "  for (int64_t i = 0; i < n; ++i) {\n    const float v = x[i];\n" +
                ("    const float w = y[i];\n" if binary else "") + f"    out[i] = {op.c};\n  }}\n" + tail)
    common = (head + "  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;\n"
              "  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];\n"
              "  const float* x = static_cast<const float*>(inputs[0].data);\n"
              "  float* out = static_cast<float*>(outputs[0].data);\n"
              "  for (int64_t r = 0; r < rows; ++r) {\n    const float* row = x + r * cols;\n")
    if op.c == "logsumexp":
        return (common + "    float m = -INFINITY;\n    for (int64_t i = 0; i < cols; ++i) m = fmaxf(m, row[i]);\n"
                "    float s = 0.f;\n    for (int64_t i = 0; i < cols; ++i) s += expf(row[i] - m);\n"
                "    out[r] = logf(s) + m;\n  }\n" + tail)
    init, step, _, final = op.c.split("|")
    return (common + f"    float acc = {init};\n"
            f"    for (int64_t i = 0; i < cols; ++i) {{\n      const float v = row[i];\n      acc = {step};\n    }}\n"
            f"    const int64_t n = cols;\n    (void)n;\n    out[r] = {final};\n  }}\n" + tail)


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out, fixtures = root / "tasks" / "starter", root / "tasks" / "fixtures" / "starter"
    out.mkdir(parents=True, exist_ok=True)
    fixtures.mkdir(parents=True, exist_ok=True)
    names = [op.name for op in OPS]
    assert len(set(names)) == len(names), "duplicate op names"
    entries, batch = [], []
    for number, op in enumerate(OPS, start=1):
        stem = f"{number:03d}_{op.name}"
        (out / f"{stem}.py").write_text(task_source(number, op))
        entries.append(manifest_entry(number, op))
        (fixtures / f"{stem}.native.cu").write_text(native_fixture(number, op))
        (fixtures / f"{stem}.host.cpp").write_text(host_fixture(number, op))
        for fmt, ext, device in (("native", "native.cu", "cuda"), ("host", "host.cpp", "cpu")):
            batch.append({"task": f"tasks/starter/{stem}.py", "candidate": f"tasks/fixtures/starter/{stem}.{ext}",
                          "format": fmt, "device": device, "expect": "OK"})
    (out / "manifest.json").write_text(json.dumps({"level": 0, "tasks": entries}, indent=1) + "\n")
    (fixtures / "manifest.json").write_text(json.dumps(batch, indent=1) + "\n")
    held_out = sum(op.split == "test" for op in OPS)
    print(f"{out}: {len(OPS)} tasks, {len(OPS) - held_out} train, {held_out} held out; "
          f"{fixtures}: a native and a host solution of each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
