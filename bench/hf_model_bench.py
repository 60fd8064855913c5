#!/usr/bin/env python3
"""Hugging Face transformers baseline for bench/model_bench.cpp: the same measurements, the same
`row <name> <value> <unit>` lines, so a script can divide ours by theirs.

(a) update: LlamaForCausalLM of the SmolLM2-135M shape with random weights, float32 weights under
    bfloat16 autocast, next-token cross-entropy (labels = input ids), torch.optim.AdamW (its default
    implementation for the device), at batch x seq tokens; median step time.
(b) sampling: the model in bfloat16, generate(do_sample=True, temperature=0.9, top_k=0,
    min_new_tokens=N, max_new_tokens=N) on random prompts, at batches 64 and 256.
Without CUDA (or with --cpu) it runs on the CPU with tiny batches, labelled as such; --tiny shrinks
the model too.

usage: bench/hf_model_bench.py [--tiny] [--cpu] [--update-batch N] [--update-seq N] [--iters N]
                               [--sample-batches 64,256] [--prompt N] [--new N]
                               [--skip-update] [--skip-sample]
"""
import argparse
import math
import statistics
import sys
import time


def main() -> int:
    p = argparse.ArgumentParser(description="transformers baseline for kernelrl_model_bench")
    p.add_argument("--tiny", action="store_true", help="test-size model and batches")
    p.add_argument("--cpu", action="store_true", help="run on the CPU even when CUDA is there")
    p.add_argument("--update-batch", type=int, default=None)
    p.add_argument("--update-seq", type=int, default=None)
    p.add_argument("--iters", type=int, default=None)
    p.add_argument("--sample-batches", default=None, help="comma-separated batch sizes")
    p.add_argument("--prompt", type=int, default=None)
    p.add_argument("--new", type=int, default=None)
    p.add_argument("--skip-update", action="store_true")
    p.add_argument("--skip-sample", action="store_true")
    a = p.parse_args()

    import torch
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM

    cuda = torch.cuda.is_available() and not a.cpu
    device = torch.device("cuda:0" if cuda else "cpu")
    small = a.tiny or not cuda
    update_batch = a.update_batch or (2 if small else 32)
    update_seq = a.update_seq or ((64 if a.tiny else 128) if small else 1024)
    iters = a.iters or (3 if small else 5)
    batches = [int(b) for b in a.sample_batches.split(",")] if a.sample_batches else ([2, 4] if small else [64, 256])
    prompt_len = a.prompt or ((16 if a.tiny else 32) if small else 512)
    new_tokens = a.new or (16 if small else 512)

    shape = dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                 num_attention_heads=9, num_key_value_heads=3)
    if a.tiny:
        shape = dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2)
    config = LlamaConfig(**shape, tie_word_embeddings=True, rope_theta=100000.0, rms_norm_eps=1e-5,
                         max_position_embeddings=8192, bos_token_id=0, eos_token_id=0, pad_token_id=0)
    device_name = torch.cuda.get_device_name(0) if cuda else "cpu"
    print(f"# hf_model_bench: device {device_name}{'' if cuda else ' (CPU: tiny batches, not comparable with GPU numbers)'}, "
          f"torch {torch.__version__}, transformers {transformers.__version__}")
    print(f"# model: {'tiny (test size)' if a.tiny else 'SmolLM2-135M shape'} LlamaForCausalLM, random weights")

    def sync():
        if cuda:
            torch.cuda.synchronize()

    if not a.skip_update:
        torch.manual_seed(0)
        model = LlamaForCausalLM(config).to(device).train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, weight_decay=0.01)
        ids = torch.randint(0, config.vocab_size, (update_batch, update_seq), device=device)
        print(f"# update: batch {update_batch} x {update_seq} tokens, float32 weights"
              f"{' + bfloat16 autocast' if cuda else ''}, labels loss, torch.optim.AdamW, "
              f"{model.config._attn_implementation} attention")
        times, first_loss = [], None
        for i in range(iters + 2):
            sync()
            start = time.perf_counter()
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=cuda):
                loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            sync()
            if first_loss is None:
                first_loss = loss.item()
            if i >= 2:
                times.append(time.perf_counter() - start)
        med = statistics.median(times)
        print(f"# update: first loss {first_loss:.4f} (ln vocab {math.log(config.vocab_size):.4f}); step "
              f"{med * 1e3:.1f} ms median, {min(times) * 1e3:.1f}..{max(times) * 1e3:.1f} over {len(times)} steps")
        print(f"row update_step_ms {med * 1e3:.2f} ms")
        print(f"row update_tokens_per_s {update_batch * update_seq / med:.0f} tokens/s")
        del model, optimizer

    if not a.skip_sample:
        torch.manual_seed(0)
        dtype = torch.bfloat16 if cuda else torch.float32
        model = LlamaForCausalLM(config).to(device=device, dtype=dtype).eval()
        for batch in batches:
            ids = torch.randint(1, config.vocab_size, (batch, prompt_len), device=device)
            mask = torch.ones_like(ids)
            kwargs = dict(attention_mask=mask, do_sample=True, temperature=0.9, top_k=0, top_p=1.0,
                          pad_token_id=0, eos_token_id=None)
            with torch.no_grad():
                model.generate(ids, min_new_tokens=min(8, new_tokens), max_new_tokens=min(8, new_tokens), **kwargs)
                times, n_new = [], 0
                for _ in range(3):  # odd, so the median is a measured run (as in model_bench.cpp)
                    sync()
                    start = time.perf_counter()
                    out = model.generate(ids, min_new_tokens=new_tokens, max_new_tokens=new_tokens, **kwargs)
                    sync()
                    times.append(time.perf_counter() - start)
                    n_new = (out.shape[1] - prompt_len) * batch
            med = statistics.median(times)
            print(f"# sample: batch {batch}, prompt {prompt_len}, {n_new} new tokens in total, "
                  f"{'bfloat16' if dtype == torch.bfloat16 else 'float32'} weights; {med:.3f} s "
                  f"({min(times):.3f}..{max(times):.3f} over {len(times)})")
            print(f"row sample_b{batch}_new_tokens_per_s {n_new / med:.0f} tokens/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
