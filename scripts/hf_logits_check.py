#!/usr/bin/env python3
"""Compare our transformer's logits with Hugging Face transformers on the same checkpoint.

usage: scripts/hf_logits_check.py DIR [--tolerance 1e-3] [--device cpu|cuda]

DIR is a Hugging Face checkpoint folder (config.json + model.safetensors, as save_hf_checkpoint
writes it) in which `kernelrl_model_bench --dump-logits DIR` has written kernelrl_logits.json
(input_ids, attention_mask, position_ids, shape) and kernelrl_logits.f32 (raw little-endian float32
[B, T, vocab]). This loads DIR with AutoModelForCausalLM in float32 (eager attention, the reference
numerics), runs the same left-padded batch with the same position ids, and prints the largest
absolute difference over the real (unpadded) positions, plus argmax agreement. Exit status 0 when
the difference is within --tolerance, 1 when not, 2 when something is missing.
"""
import argparse
import json
import os
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", help="Hugging Face checkpoint folder holding kernelrl_logits.{json,f32}")
    parser.add_argument("--tolerance", type=float, default=1e-3, help="max abs logit difference accepted")
    parser.add_argument("--device", default="cpu", help="where transformers runs (cpu or cuda)")
    args = parser.parse_args()

    meta_path = os.path.join(args.dir, "kernelrl_logits.json")
    if not os.path.exists(meta_path):
        print(f"hf_logits_check: {meta_path} not found; run kernelrl_model_bench --dump-logits {args.dir} first",
              file=sys.stderr)
        return 2
    try:
        import numpy as np
        import torch
        from transformers import AutoModelForCausalLM
    except ImportError as e:
        print(f"hf_logits_check: needs numpy, torch and transformers ({e})", file=sys.stderr)
        return 2

    with open(meta_path) as f:
        meta = json.load(f)
    shape = tuple(meta["shape"])
    ours = np.fromfile(os.path.join(args.dir, meta["file"]), dtype="<f4")
    if ours.size != np.prod(shape):
        print(f"hf_logits_check: {meta['file']} holds {ours.size} floats, shape {shape} needs {np.prod(shape)}",
              file=sys.stderr)
        return 2
    ours = torch.from_numpy(ours.reshape(shape).copy())

    # Loaded in the checkpoint's dtype (or transformers' default), then made float32: a bfloat16
    # checkpoint upcasts exactly, and no dtype keyword is needed (its name changed across versions).
    try:
        model = AutoModelForCausalLM.from_pretrained(args.dir, attn_implementation="eager")
    except TypeError:  # transformers without attn_implementation
        model = AutoModelForCausalLM.from_pretrained(args.dir)
    model.float().to(args.device).eval()
    ids = torch.tensor(meta["input_ids"], dtype=torch.long, device=args.device)
    mask = torch.tensor(meta["attention_mask"], dtype=torch.long, device=args.device)
    positions = torch.tensor(meta["position_ids"], dtype=torch.long, device=args.device)
    with torch.no_grad():
        theirs = model(input_ids=ids, attention_mask=mask, position_ids=positions).logits.float().cpu()
    if tuple(theirs.shape) != shape:
        print(f"hf_logits_check: transformers gives logits {tuple(theirs.shape)}, ours are {shape}", file=sys.stderr)
        return 1

    real = mask.cpu().bool()
    diff = (theirs - ours).abs()[real]
    max_diff = diff.max().item()
    scale = theirs[real].abs().max().item()
    agree = (theirs.argmax(-1) == ours.argmax(-1))[real].float().mean().item()
    print(f"model: {type(model).__name__} from {args.dir}; ours computed on {meta.get('device', '?')} "
          f"at commit {meta.get('commit', '?')}")
    print(f"positions compared: {int(real.sum())} of {shape[0] * shape[1]} (padding excluded)")
    print(f"max abs logit difference: {max_diff:.3e} (largest |logit| {scale:.3f}); argmax agreement {agree:.4f}")
    ok = max_diff <= args.tolerance
    print("hf_logits_check:", "OK" if ok else f"FAIL (tolerance {args.tolerance:g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
