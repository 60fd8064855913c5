"""One real TRL GRPOTrainer step on the CPU with the kernel reward through a live local service:
the project's default model (SmolLM2-135M-Instruct, the GGUF scripts/fetch-default-model.sh
fetches, converted with `kernelrl convert`; its tokenizer and chat template read from the same
GGUF by transformers), the service test task in the host format, 2 completions of 1 prompt. Exits
77 (CTest: skipped) when the interpreter has no TRL; the log it prints is in docs/results.md.

    KERNELRL_BINARY=build/tools/kernelrl/kernelrl /tmp/trl-venv/bin/python tests/python/trl_grpo_step.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kernelrl_testing import CHEAP_OPTIONS, KERNELRL, SOURCE_DIR, TASK_ADD, TASK_ADD_REF, LocalService

try:
    import torch
    import trl
    from datasets import Dataset
    from transformers import AutoTokenizer
except ImportError as e:
    print(f"skipped: this interpreter ({sys.executable}) cannot import {e.name}; install trl and gguf in a venv")
    sys.exit(77)

from kernelrl_client import Task
from kernelrl_client.adapters.trl import KernelReward, kernel_dataset

GGUF = Path(os.environ.get("KERNELRL_DEFAULT_GGUF", SOURCE_DIR / ".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf"))


def main() -> int:
    if not GGUF.exists():
        print(f"skipped: {GGUF} is missing (scripts/fetch-default-model.sh)")
        return 77
    work = Path(tempfile.mkdtemp(prefix="kernelrl-trl-step-"))
    model_dir = work / "model"
    subprocess.run([KERNELRL, "convert", str(GGUF), str(model_dir)], check=True)
    tokenizer = AutoTokenizer.from_pretrained(str(GGUF.parent), gguf_file=GGUF.name)
    tokenizer.save_pretrained(str(model_dir))
    print(f"torch {torch.__version__}, trl {trl.__version__}, model {model_dir} from {GGUF.name}")

    service = LocalService()
    try:
        task = Task(source=TASK_ADD.read_text(), name="task_add.py", ref=TASK_ADD_REF)
        rows = kernel_dataset([task], format="host") * 2
        reward = KernelReward(format="host", service_url=service.url, options=CHEAP_OPTIONS)
        args = trl.GRPOConfig(output_dir=str(work / "out"), max_steps=1, per_device_train_batch_size=2,
                              num_generations=2, max_completion_length=48, learning_rate=1e-6, logging_steps=1,
                              use_cpu=True, report_to=[], save_strategy="no", temperature=0.9, seed=21)
        trainer = trl.GRPOTrainer(model=str(model_dir), reward_funcs=[reward], args=args,
                                  train_dataset=Dataset.from_list(rows), processing_class=tokenizer)
        before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
        t0 = time.monotonic()
        trainer.train()
        step_s = time.monotonic() - t0
        changed = sum(int(not torch.equal(before[n], p.detach())) for n, p in trainer.model.named_parameters())
        print(json.dumps({"log_history": trainer.state.log_history, "step_s": round(step_s, 1),
                          "n_parameters_changed": changed, "n_parameters": len(before),
                          "rewards_of_last_call": [i["feedback_line"] for i in reward.last_infos]}, indent=1))
        if not trainer.state.log_history or trainer.state.global_step != 1:
            print("FAILED: no training step was logged")
            return 1
        return 0
    finally:
        service.stop()


if __name__ == "__main__":
    sys.exit(main())
