#!/usr/bin/env python3
"""A tiny random Llama-shaped policy with SmolLM2's vocabulary, as a Hugging Face folder
(config.json, model.safetensors; standard library only), for dry runs of the training scripts on a
CPU in seconds (scripts/learning-signal.sh with MODEL=that folder and
TOKENIZER=tests/data/tokenizer/smollm2). It writes noise: nothing it samples is meant to be right.

    python3 scripts/make_tiny_policy.py OUT_DIR [--seed N]
"""
import argparse
import json
import random
import struct
from pathlib import Path

VOCAB, HIDDEN, FFN, LAYERS, HEADS, KV_HEADS, CONTEXT = 49152, 32, 64, 2, 4, 2, 8192


def tensors():
    head = HIDDEN // HEADS
    yield "model.embed_tokens.weight", (VOCAB, HIDDEN), 0.02
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        yield p + "input_layernorm.weight", (HIDDEN,), None
        yield p + "self_attn.q_proj.weight", (HEADS * head, HIDDEN), 0.1
        yield p + "self_attn.k_proj.weight", (KV_HEADS * head, HIDDEN), 0.1
        yield p + "self_attn.v_proj.weight", (KV_HEADS * head, HIDDEN), 0.1
        yield p + "self_attn.o_proj.weight", (HIDDEN, HEADS * head), 0.1
        yield p + "post_attention_layernorm.weight", (HIDDEN,), None
        yield p + "mlp.gate_proj.weight", (FFN, HIDDEN), 0.1
        yield p + "mlp.up_proj.weight", (FFN, HIDDEN), 0.1
        yield p + "mlp.down_proj.weight", (HIDDEN, FFN), 0.1
    yield "model.norm.weight", (HIDDEN,), None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    header, blobs, offset = {}, [], 0
    for name, shape, scale in tensors():
        n = 1
        for d in shape:
            n *= d
        values = [1.0] * n if scale is None else [rng.gauss(0.0, scale) for _ in range(n)]
        blob = struct.pack(f"<{n}f", *values)
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    with open(out / "model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for blob in blobs:
            f.write(blob)
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": VOCAB,
              "hidden_size": HIDDEN, "intermediate_size": FFN, "num_hidden_layers": LAYERS,
              "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS, "hidden_act": "silu",
              "max_position_embeddings": CONTEXT, "rope_theta": 10000.0, "rms_norm_eps": 1e-05,
              "tie_word_embeddings": True, "bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "float32"}
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")


if __name__ == "__main__":
    main()
