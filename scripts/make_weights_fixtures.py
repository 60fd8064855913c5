#!/usr/bin/env python3
"""Makes the small checkpoint fixtures of tests/weights under tests/data/weights/, with the
reference implementations (the `gguf` package of llama.cpp and `safetensors`), so the C++ readers
are checked against them rather than against themselves.

    python3 -m venv /tmp/wvenv && /tmp/wvenv/bin/pip install gguf numpy safetensors
    /tmp/wvenv/bin/python scripts/make_weights_fixtures.py

Files (all deterministic; together well under 1 MB):
  tiny_llama.gguf                llama, vocab 64, hidden 32, 2 layers, 4 heads, 2 kv heads; tensors in
                                 F32, F16, BF16, Q8_0, Q4_0, Q4_1; Q/K permuted as llama.cpp's converter
                                 does; tokenizer metadata; one key of every metadata value type (test.*)
  tiny_llama_dequant.safetensors every tensor of tiny_llama.gguf (GGUF names, row-major shapes) as
                                 gguf.quants.dequantize gives it, float32
  tiny_llama_hf/                 the Hugging Face checkpoint load_checkpoint(tiny_llama.gguf) must equal
                                 (F32, two shards + model.safetensors.index.json, config.json); tensors
                                 stored exactly (F32/F16) in the GGUF equal the original HF tensors
  tiny_qwen2.gguf                qwen2 (q/k/v biases, tied embeddings, no permutation), alignment 64
  tiny_qwen2_hf/                 the same model as a HF folder (F16 model.safetensors, config.json)
  smollm2_rows.safetensors       a few dequantised rows of the default model (.cache/models/
                                 SmolLM2-135M-Instruct.Q4_1.gguf), GGUF-side and HF-side (Q/K
                                 un-permuted); __metadata__ "rows" lists the rows (JSON)
"""
import json
import os
import sys
from pathlib import Path

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q
from safetensors.numpy import save_file

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "weights"
DEFAULT_MODEL = ROOT / ".cache" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def permute(w, n_head):
    """llama.cpp convert_hf_to_gguf.py LlamaModel.permute: HF rotate-half rows -> interleaved."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def unpermute(w, n_head):
    """The inverse of permute (what the C++ loader does)."""
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def fp16_exact(a):
    """Values that survive a round trip through float16 unchanged."""
    return a.astype(np.float16).astype(np.float32)


def bf16_exact(a):
    return (a.astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)


# ---------------------------------------------------------------- tiny llama (GGUF) + expected HF
LLAMA = dict(vocab=64, hidden=32, inter=64, layers=2, heads=4, kv_heads=2, ctx=128, theta=10000.0, eps=1e-5)

# GGUF storage type of each tensor (by HF name suffix and layer); everything else is F32.
LLAMA_TYPES = {
    "model.embed_tokens.weight": Q.Q8_0,
    "lm_head.weight": Q.F16,
    "model.layers.0.self_attn.v_proj.weight": Q.F16,
    "model.layers.0.mlp.gate_proj.weight": Q.Q4_0,
    "model.layers.0.mlp.up_proj.weight": Q.Q4_1,
    "model.layers.0.mlp.down_proj.weight": Q.Q8_0,
    "model.layers.1.self_attn.q_proj.weight": Q.Q4_0,
    "model.layers.1.self_attn.k_proj.weight": Q.Q4_1,
    "model.layers.1.self_attn.v_proj.weight": Q.Q8_0,
    "model.layers.1.self_attn.o_proj.weight": Q.F16,
    "model.layers.1.mlp.gate_proj.weight": Q.BF16,
    "model.layers.1.mlp.down_proj.weight": Q.Q4_1,
}

HF_TO_GGUF_LAYER = {
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.o_proj.weight": "attn_output.weight",
    "self_attn.q_proj.bias": "attn_q.bias",
    "self_attn.k_proj.bias": "attn_k.bias",
    "self_attn.v_proj.bias": "attn_v.bias",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
    "input_layernorm.weight": "attn_norm.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
}


def gguf_name(hf):
    fixed = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
             "lm_head.weight": "output.weight"}
    if hf in fixed:
        return fixed[hf]
    _, _, layer, rest = hf.split(".", 3)
    return f"blk.{layer}.{HF_TO_GGUF_LAYER[rest]}"


def hf_tensors(rng, c, bias=False, tied=False):
    """Random HF-named tensors of a Llama/Qwen2 of config c (float32, fp16-exact values)."""
    h, hd = c["hidden"], c["hidden"] // c["heads"]
    t = {"model.embed_tokens.weight": rng.standard_normal((c["vocab"], h)),
         "model.norm.weight": 1 + 0.1 * rng.standard_normal(h)}
    if not tied:
        t["lm_head.weight"] = rng.standard_normal((c["vocab"], h))
    for i in range(c["layers"]):
        p = f"model.layers.{i}."
        t[p + "self_attn.q_proj.weight"] = rng.standard_normal((c["heads"] * hd, h))
        t[p + "self_attn.k_proj.weight"] = rng.standard_normal((c["kv_heads"] * hd, h))
        t[p + "self_attn.v_proj.weight"] = rng.standard_normal((c["kv_heads"] * hd, h))
        t[p + "self_attn.o_proj.weight"] = rng.standard_normal((h, c["heads"] * hd))
        if bias:
            t[p + "self_attn.q_proj.bias"] = rng.standard_normal(c["heads"] * hd)
            t[p + "self_attn.k_proj.bias"] = rng.standard_normal(c["kv_heads"] * hd)
            t[p + "self_attn.v_proj.bias"] = rng.standard_normal(c["kv_heads"] * hd)
        t[p + "mlp.gate_proj.weight"] = rng.standard_normal((c["inter"], h))
        t[p + "mlp.up_proj.weight"] = rng.standard_normal((c["inter"], h))
        t[p + "mlp.down_proj.weight"] = rng.standard_normal((h, c["inter"]))
        t[p + "input_layernorm.weight"] = 1 + 0.1 * rng.standard_normal(h)
        t[p + "post_attention_layernorm.weight"] = 1 + 0.1 * rng.standard_normal(h)
    return {k: fp16_exact(0.1 * v if v.ndim == 2 else v) for k, v in t.items()}


def add_hparams(w, c, arch):
    w.add_block_count(c["layers"])
    w.add_context_length(c["ctx"])
    w.add_embedding_length(c["hidden"])
    w.add_feed_forward_length(c["inter"])
    w.add_head_count(c["heads"])
    w.add_head_count_kv(c["kv_heads"])
    w.add_rope_freq_base(c["theta"])
    w.add_layer_norm_rms_eps(c["eps"])
    w.add_rope_dimension_count(c["hidden"] // c["heads"])
    w.add_vocab_size(c["vocab"])


def tokens_for(vocab):
    base = ["<unk>", "<|im_start|>", "<|im_end|>"] + list("abcdefghijklmnopqrstuvwxyz")
    merged = ["ab", "cd", "abcd", "Ġa", "Ġthe", "he", "ll", "llo", "hello"]
    toks = base + merged
    toks += [f"<extra_{i}>" for i in range(vocab - len(toks))]
    return toks


def add_tokenizer(w, vocab):
    toks = tokens_for(vocab)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(toks)
    w.add_token_types([3, 3, 3] + [1] * (vocab - 3))
    w.add_token_merges(["a b", "c d", "ab cd", "Ġ a", "h e", "l l", "ll o", "he llo"])
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_pad_token_id(2)
    w.add_add_bos_token(False)
    w.add_chat_template("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}")


def add_test_keys(w):
    """One key of each GGUF value type, read back by the metadata test."""
    V = gguf.GGUFValueType
    w.add_uint8("test.uint8", 200)
    w.add_int8("test.int8", -100)
    w.add_uint16("test.uint16", 60000)
    w.add_int16("test.int16", -30000)
    w.add_uint32("test.uint32", 4000000000)
    w.add_int32("test.int32", -2000000000)
    w.add_uint64("test.uint64", 18000000000000000000)
    w.add_int64("test.int64", -9000000000000000000)
    w.add_float32("test.float32", 0.1)
    w.add_float64("test.float64", 0.1)
    w.add_bool("test.bool", True)
    w.add_string("test.string", "héllo wörld")
    w.add_key_value("test.array_int32", [1, -2, 3], V.ARRAY, sub_type=V.INT32)
    w.add_key_value("test.array_uint8", [7, 8], V.ARRAY, sub_type=V.UINT8)
    w.add_key_value("test.array_float32", [0.5, -1.25], V.ARRAY, sub_type=V.FLOAT32)
    w.add_array("test.array_string", ["x", "", "zz"])
    w.add_array("test.array_nested", [[1, 2], [3]])


def store(w, name, values, qtype):
    if qtype == Q.F32:
        w.add_tensor(name, values.astype(np.float32))
    elif qtype == Q.F16:
        w.add_tensor(name, values.astype(np.float16))
    else:
        w.add_tensor(name, gguf.quants.quantize(values.astype(np.float32), qtype), raw_dtype=qtype)


def write_gguf(path, arch, c, tensors, types, permute_qk, alignment=None, extra=None):
    w = gguf.GGUFWriter(str(path), arch)
    if alignment:
        w.add_custom_alignment(alignment)
    add_hparams(w, c, arch)
    add_tokenizer(w, c["vocab"])
    if extra:
        extra(w)
    for hf, values in tensors.items():
        if permute_qk and hf.endswith("self_attn.q_proj.weight"):
            values = permute(values, c["heads"])
        elif permute_qk and hf.endswith("self_attn.k_proj.weight"):
            values = permute(values, c["kv_heads"])
        store(w, gguf_name(hf), values, types.get(hf, Q.F32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def dequantized(path):
    """{gguf name: float32 row-major array} through the reference reader and dequantize."""
    r = gguf.GGUFReader(str(path))
    out = {}
    for t in r.tensors:
        shape = tuple(int(d) for d in reversed(t.shape))
        out[t.name] = np.ascontiguousarray(gguf.quants.dequantize(t.data, t.tensor_type).reshape(shape), np.float32)
    return out


def hf_config(arch, c, tied, bias):
    cfg = {
        "architectures": ["Qwen2ForCausalLM" if arch == "qwen2" else "LlamaForCausalLM"],
        "model_type": arch, "vocab_size": c["vocab"], "hidden_size": c["hidden"],
        "intermediate_size": c["inter"], "num_hidden_layers": c["layers"],
        "num_attention_heads": c["heads"], "num_key_value_heads": c["kv_heads"],
        "hidden_act": "silu", "max_position_embeddings": c["ctx"], "rope_theta": c["theta"],
        "rms_norm_eps": c["eps"], "tie_word_embeddings": tied, "bos_token_id": 1, "eos_token_id": [2],
        "torch_dtype": "float32",
    }
    if arch == "llama":
        cfg["attention_bias"] = bias
    else:
        cfg["use_sliding_window"] = False
    return cfg


def write_json(path, obj):
    path.write_text(json.dumps(obj, indent=2) + "\n")


def make_tiny_llama(rng):
    c = LLAMA
    hf = hf_tensors(rng, c)
    for name, qtype in LLAMA_TYPES.items():  # BF16 storage is exact only for bf16 values
        if qtype == Q.BF16:
            hf[name] = bf16_exact(hf[name])
    path = OUT / "tiny_llama.gguf"
    write_gguf(path, "llama", c, hf, LLAMA_TYPES, permute_qk=True, extra=add_test_keys)
    deq = dequantized(path)
    save_file(deq, str(OUT / "tiny_llama_dequant.safetensors"), metadata={"gguf": gguf_version()})

    expected = {}
    for name, values in hf.items():
        got = deq[gguf_name(name)]
        if name.endswith("self_attn.q_proj.weight"):
            got = unpermute(got, c["heads"])
        elif name.endswith("self_attn.k_proj.weight"):
            got = unpermute(got, c["kv_heads"])
        if LLAMA_TYPES.get(name, Q.F32) in (Q.F32, Q.F16, Q.BF16):
            assert np.array_equal(got, values), name  # exact storage gives back the HF tensor
        else:
            assert np.abs(got - values).max() < 0.05, name  # quantised: close
        expected[name] = got
    folder = OUT / "tiny_llama_hf"
    folder.mkdir(exist_ok=True)
    names = sorted(expected)
    shards = {"model-00001-of-00002.safetensors": names[: len(names) // 2],
              "model-00002-of-00002.safetensors": names[len(names) // 2:]}
    weight_map = {}
    for shard, shard_names in shards.items():
        save_file({n: expected[n] for n in shard_names}, str(folder / shard), metadata={"format": "pt"})
        weight_map.update({n: shard for n in shard_names})
    total = sum(v.nbytes for v in expected.values())
    write_json(folder / "model.safetensors.index.json", {"metadata": {"total_size": total}, "weight_map": weight_map})
    write_json(folder / "config.json", hf_config("llama", c, tied=False, bias=False))


def make_tiny_qwen2(rng):
    c = dict(LLAMA, layers=1, ctx=256, theta=1000000.0, eps=1e-6)
    hf = hf_tensors(rng, c, bias=True, tied=True)
    types = {"model.layers.0.mlp.up_proj.weight": Q.F16, "model.layers.0.self_attn.k_proj.bias": Q.F16}
    path = OUT / "tiny_qwen2.gguf"
    write_gguf(path, "qwen2", c, hf, types, permute_qk=False, alignment=64)
    deq = dequantized(path)
    for name, values in hf.items():
        assert np.array_equal(deq[gguf_name(name)], values), name
    folder = OUT / "tiny_qwen2_hf"
    folder.mkdir(exist_ok=True)
    save_file({n: v.astype(np.float16) for n, v in hf.items()}, str(folder / "model.safetensors"),
              metadata={"format": "pt"})
    write_json(folder / "config.json", hf_config("qwen2", c, tied=True, bias=True))


# Rows of the default model checked against the reference dequantisation (GGUF-side names) and
# the un-permuted HF-side rows (HF names).
SMOLLM2_GGUF_ROWS = {
    "token_embd.weight": [0, 1, 49151],           # Q8_0
    "blk.0.attn_q.weight": [0, 1, 575],           # Q4_1, as stored (permuted)
    "blk.29.ffn_down.weight": [0, 575],           # Q4_1
    "output_norm.weight": None,                    # F32, whole
}
SMOLLM2_HF_ROWS = {
    "model.layers.0.self_attn.q_proj.weight": ("blk.0.attn_q.weight", 9, [0, 1, 31, 32, 63, 64, 575]),
    "model.layers.0.self_attn.k_proj.weight": ("blk.0.attn_k.weight", 3, [0, 1, 31, 32, 191]),
}


def make_smollm2_rows():
    if not DEFAULT_MODEL.exists():
        sys.exit(f"{DEFAULT_MODEL} is missing: run scripts/fetch-default-model.sh first")
    r = gguf.GGUFReader(str(DEFAULT_MODEL))
    by_name = {t.name: t for t in r.tensors}

    def deq(name):
        t = by_name[name]
        shape = tuple(int(d) for d in reversed(t.shape))
        return gguf.quants.dequantize(t.data, t.tensor_type).reshape(shape).astype(np.float32)

    out, rows_of = {}, {}
    for name, rows in SMOLLM2_GGUF_ROWS.items():
        full = deq(name)
        if rows is None:
            out[name] = np.ascontiguousarray(full)
        else:
            out[name] = np.ascontiguousarray(full[rows])
            rows_of[name] = rows
    for name, (src, n_head, rows) in SMOLLM2_HF_ROWS.items():
        out[name] = np.ascontiguousarray(unpermute(deq(src), n_head)[rows])
        rows_of[name] = rows
    # One metadata key: safetensors writes __metadata__ in hash order, so several would not be
    # byte-for-byte reproducible.
    meta = {"rows": json.dumps(rows_of, sort_keys=True)}
    save_file(out, str(OUT / "smollm2_rows.safetensors"), metadata=meta)


def gguf_version():
    try:
        from importlib.metadata import version
        return version("gguf")
    except Exception:
        return "unknown"


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    # The permutation pair must be inverse to each other (and match llama.cpp's converter).
    w = np.arange(8 * 3 * 5, dtype=np.float32).reshape(8 * 3, 5)
    assert np.array_equal(unpermute(permute(w, 3), 3), w)
    rng = np.random.default_rng(20240611)
    make_tiny_llama(rng)
    make_tiny_qwen2(rng)
    make_smollm2_rows()
    total = 0
    for p in sorted(OUT.rglob("*")):
        if p.is_file():
            total += p.stat().st_size
            print(f"{p.stat().st_size:8d}  {p.relative_to(ROOT)}")
    print(f"{total:8d}  total")


if __name__ == "__main__":
    main()
