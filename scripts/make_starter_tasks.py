#!/usr/bin/env python3
"""Writes tasks/starter/: single-operator tasks of one shape where a small model can succeed.

usage: python3 scripts/make_starter_tasks.py [OUT_DIR]   (default tasks/starter; rerun after editing OPS)

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
    families: tuple = ()


OPS = [
    # Unary element-wise.
    Op("abs", "unary", "torch.abs(x)", "absolute value"),
    Op("neg", "unary", "torch.neg(x)", "negation"),
    Op("square", "unary", "x * x", "square"),
    Op("exp", "unary", "torch.exp(x)", "exponential"),
    Op("sin", "unary", "torch.sin(x)", "sine", split="test"),
    Op("cos", "unary", "torch.cos(x)", "cosine"),
    Op("tanh", "unary", "torch.tanh(x)", "hyperbolic tangent"),
    Op("sigmoid", "unary", "torch.sigmoid(x)", "logistic sigmoid"),
    Op("relu", "unary", "torch.relu(x)", "ReLU"),
    Op("relu6", "unary", "F.relu6(x)", "ReLU6: min(max(x, 0), 6)"),
    Op("gelu_tanh", "unary", "F.gelu(x, approximate='tanh')", "GELU, tanh approximation"),
    Op("silu", "unary", "F.silu(x)", "SiLU: x * sigmoid(x)"),
    Op("softsign", "unary", "F.softsign(x)", "softsign: x / (1 + |x|)", split="test"),
    Op("mish", "unary", "F.mish(x)", "Mish: x * tanh(softplus(x))", split="test"),
    Op("hardswish", "unary", "F.hardswish(x)", "hard swish"),
    Op("erf", "unary", "torch.erf(x)", "error function"),
    Op("atan", "unary", "torch.atan(x)", "arctangent", split="test"),
    Op("expm1", "unary", "torch.expm1(x)", "exp(x) - 1", split="test"),
    Op("log1p_abs", "unary", "torch.log1p(torch.abs(x))", "log(1 + |x|)"),
    Op("rsqrt_1p_square", "unary", "torch.rsqrt(1 + x * x)", "1 / sqrt(1 + x^2)"),
    Op("sign", "unary", "torch.sign(x)", "sign (-1, 0 or 1)"),
    Op("logsigmoid", "unary", "F.logsigmoid(x)", "log(sigmoid(x))"),
    # Activations with parameters given at construction.
    Op("leaky_relu", "param", "F.leaky_relu(x, negative_slope=self.negative_slope)", "leaky ReLU",
       params={"negative_slope": 0.2}),
    Op("elu", "param", "F.elu(x, alpha=self.alpha)", "ELU", params={"alpha": 0.5}),
    Op("celu", "param", "F.celu(x, alpha=self.alpha)", "CELU", split="test", params={"alpha": 1.5}),
    Op("hardtanh", "param", "F.hardtanh(x, min_val=self.min_val, max_val=self.max_val)", "hardtanh",
       split="test", params={"min_val": -2.0, "max_val": 2.0}),
    Op("softplus", "param", "F.softplus(x, beta=self.beta, threshold=self.threshold)", "softplus",
       params={"beta": 2.0, "threshold": 10.0}),
    Op("clamp", "param", "torch.clamp(x, min=self.low, max=self.high)", "clamp to [low, high]",
       params={"low": -0.5, "high": 0.75}),
    Op("threshold", "param", "F.threshold(x, self.threshold, self.value)",
       "threshold: x where x > threshold, else value", params={"threshold": 0.1, "value": -1.0}),
    Op("scale_shift", "param", "x * self.scale + self.shift", "x * scale + shift", params={"scale": 1.7, "shift": -0.3}),
    Op("pow_abs", "param", "torch.pow(torch.abs(x), self.exponent)", "|x| ** exponent", split="test",
       params={"exponent": 1.5}),
    # Binary element-wise, two tensors of the same shape.
    Op("add", "binary", "x + y", "sum"),
    Op("sub", "binary", "x - y", "difference"),
    Op("mul", "binary", "x * y", "product"),
    Op("div", "binary", "x / y", "quotient (y in [0.5, 1.5))", y_positive=True),
    Op("maximum", "binary", "torch.maximum(x, y)", "element-wise maximum"),
    Op("minimum", "binary", "torch.minimum(x, y)", "element-wise minimum", split="test"),
    Op("hypot", "binary", "torch.hypot(x, y)", "sqrt(x^2 + y^2)", split="test"),
    Op("atan2", "binary", "torch.atan2(x, y)", "atan2(x, y)"),
    Op("squared_diff", "binary", "(x - y) * (x - y)", "squared difference"),
    Op("lerp", "binary", "torch.lerp(x, y, self.weight)", "x + weight * (y - x)", params={"weight": 0.3}),
    # Reductions along each row (dim 1), one value per row.
    Op("row_sum", "reduction", "torch.sum(x, dim=1)", "sum of each row"),
    Op("row_mean", "reduction", "torch.mean(x, dim=1)", "mean of each row"),
    Op("row_max", "reduction", "torch.amax(x, dim=1)", "maximum of each row"),
    Op("row_min", "reduction", "torch.amin(x, dim=1)", "minimum of each row", split="test"),
    Op("row_sum_squares", "reduction", "torch.sum(x * x, dim=1)", "sum of squares of each row"),
    Op("row_abs_max", "reduction", "torch.amax(torch.abs(x), dim=1)", "largest |x| of each row"),
    Op("row_l2_norm", "reduction", "torch.linalg.vector_norm(x, dim=1)", "Euclidean norm of each row", split="test"),
    Op("row_logsumexp", "reduction", "torch.logsumexp(x, dim=1)", "log-sum-exp of each row", split="test"),
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


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "tasks/starter")
    out.mkdir(parents=True, exist_ok=True)
    names = [op.name for op in OPS]
    assert len(set(names)) == len(names), "duplicate op names"
    entries = []
    for number, op in enumerate(OPS, start=1):
        (out / f"{number:03d}_{op.name}.py").write_text(task_source(number, op))
        entries.append(manifest_entry(number, op))
    (out / "manifest.json").write_text(json.dumps({"level": 0, "tasks": entries}, indent=1) + "\n")
    held_out = sum(op.split == "test" for op in OPS)
    print(f"{out}: {len(OPS)} tasks, {len(OPS) - held_out} train, {held_out} held out")
    return 0


if __name__ == "__main__":
    sys.exit(main())
