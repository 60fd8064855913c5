#!/usr/bin/env python3
"""Golden reference data for the C++ tokenizer (src/tokenizer/), made with Hugging Face `tokenizers`
and `transformers` from the default model's GGUF. The C++ tests compare against these files exactly.

Setup (a throwaway venv; torch is not needed):
  python3 -m venv /tmp/tokvenv && /tmp/tokvenv/bin/pip install transformers tokenizers gguf jinja2
  /tmp/tokvenv/bin/python scripts/make_tokenizer_golden.py

Writes to tests/data/tokenizer/:
  smollm2/                    a model folder as save_pretrained writes it: tokenizer.json (converted
                              from the GGUF by transformers' GGUF converter, with the pre-tokenizer of
                              the model's own tokenizer.json, see PIPELINES), tokenizer_config.json,
                              chat_template.jinja
  encode_golden.jsonl         per corpus text: name, text, ids for each GGUF `pre` pipeline, ids with
                              special tokens encoded as text, decode(ids, skip_special=True)
  pre_tokenizer_golden.jsonl  pieces from Split (every behaviour, inverted or not) and Digits
  added_tokens_golden.json    extra added tokens (lstrip, rstrip, normalized) on SmolLM2's tokenizer.json
                              and the ids they give
  chat_golden.json            the GGUF's chat template, a Qwen2 ChatML template, and their
                              apply_chat_template renders (text and ids)
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

import gguf
from tokenizers import Regex, Tokenizer, pre_tokenizers
from transformers import PreTrainedTokenizerFast
from transformers.integrations.gguf.gguf_tokenizer_mapping import (
    GGUF_PRE_TOKENIZER_SPLITS,
    convert_gguf_tokenizer,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPT2_REGEX_PIPELINE = [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]


def split_pipeline(name):
    return [pre_tokenizers.Split(Regex(GGUF_PRE_TOKENIZER_SPLITS[name]), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]


# GGUF `tokenizer.ggml.pre` name -> (pre-tokenizer steps, BPE ignore_merges), as the C++ from_spec maps
# them. "smollm" is the pipeline of SmolLM2's own tokenizer.json (and llama.cpp's): transformers'
# converter does not know the name and would leave GPT-2's, which does not split digits off first.
# llama-bpe (Llama 3) sets ignore_merges in its tokenizer.json and in llama.cpp.
PIPELINES = {
    "smollm": ([pre_tokenizers.Digits(individual_digits=True)] + GPT2_REGEX_PIPELINE, False),
    "gpt2": (GPT2_REGEX_PIPELINE, False),
    "qwen2": (split_pipeline("qwen2"), False),
    "llama-bpe": (split_pipeline("llama-bpe"), True),
}

EDGE_CASES = {
    "empty": "",
    "one_space": " ",
    "spaces": "a  b   c    d     e",
    "trailing_spaces": "hello   ",
    "leading_spaces": "   indented",
    "newlines": "\n\n\nline\n\n",
    "crlf": "first line\r\nsecond line\r\n",
    "tabs": "\t\tx = 1\n\tif x:\n\t\treturn\t# tab",
    "mixed_ws": " \t \n \r\n\t\t  \n",
    "contractions": "It's fine; we're here, they've gone, I'd go, you'll see, I'm sure, don't. IT'S LOUD. 'tis",
    "apostrophes": "rock 'n' roll ''quoted'' '''triple''' l'homme",
    "digits": "3.14159 2024-01-01 1234567890 0x1F 1e-9 -42 +7 100%",
    "digit_scripts": "①②③ ٣٤٥ ۱۲۳ १२३ Ⅻ ½ ²³ 一二三",
    "latin": "Ñandú café naïve façade Straße Œuvre ÆØÅ",
    "decomposed": "cafe\u0301 nai\u0308ve",
    "cyrillic": "Привет, мир! Съешь же ещё этих мягких французских булок.",
    "greek": "Ελληνικά: ξεσκεπάζω την ψυχοφθόρα βδελυγμία",
    "cjk": "こんにちは世界。中文测试，漢字とカタカナ。",
    "korean": "한국어 텍스트 토큰화",
    "arabic": "مرحبا بالعالم ١٢٣",
    "hebrew": "שלום עולם",
    "devanagari": "हिन्दी में परीक्षण",
    "thai": "ภาษาไทยไม่มีช่องว่าง",
    "emoji": "👍🏽 👨‍👩‍👧 🚀🔥 ❤️ 🇫🇷 done✅",
    "unicode_spaces": "a\u00a0b\u3000c\u2009d\u2028e\u0085f",
    "zero_width": "zero\u200bwidth\u200djoiner\ufeffbom",
    "control_chars": "bell\x07 nul\x00 del\x7f esc\x1b[0m",
    "punctuation_runs": "!!! ??? ... --- === *** ### @@@ $$$ ^^^ ~~~ ||| \\\\ // <> {} [] ()",
    "long_run_equals": "=" * 120,
    "long_run_spaces": "x" + " " * 70 + "y",
    "long_word": "a" * 300,
    "long_identifier": "very_long_snake_case_identifier_name_that_goes_on_and_on_for_a_while_2",
    "camel": "getElementById XMLHttpRequest camelCaseWord PascalCaseWord iPhone",
    "url_path": "https://github.com/huggingface/tokenizers/blob/main/README.md?x=1&y=2#top /usr/lib/x86_64-linux-gnu",
    "json": '{"name": "relu", "shape": [4096, 393216], "dtype": "float32", "ok": true, "eps": 1e-05}',
    "special_chat": "<|im_start|>user\nWrite a kernel.<|im_end|>\n<|im_start|>assistant\n",
    "special_adjacent": "abc<|im_end|>def<|endoftext|><|endoftext|>ghi",
    "special_partial": "<|im_sta <|im_end| <im_end|> < |im_end|>",
    "special_nested": "<<|im_start|>> <|<|im_end|>|>",
    "special_spaces": "  <|im_start|>  system  <|im_end|>  ",
    "special_others": "<repo_name>kernelrl<file_sep>src/main.cu<filename>x<gh_stars>10<jupyter_code>print(1)",
    "cuda_snippet": (
        "__global__ void relu_kernel(const float* __restrict__ x, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) y[i] = fmaxf(x[i], 0.0f);\n"
        "}\n\n"
        "relu_kernel<<<(n + 255) / 256, 256, 0, stream>>>(x, y, n);\n"
        "__shared__ float tile[32][33];  // +1 avoids bank conflicts\n"
        "#pragma unroll\nfor (int k = 0; k < 32; ++k) acc += __shfl_down_sync(0xffffffff, v, k);\n"),
    "markdown_table": "| name | runtime_us | speedup |\n|------|-----------:|:-------:|\n| relu | 12.5 | 3.2x |\n",
    "python_fstring": "print(f\"{x!r:>10} {y:.3f}\")  # f-strings\nlambda a, b: a**2 // b % 3",
}

# Repository files, code first; the golden file keeps their text, so later edits do not matter.
CORPUS_FILES = [
    ("tasks/level1/001_matmul_square.py", None),
    ("tasks/level1/003_softmax.py", None),
    ("tasks/level1/004_layernorm.py", None),
    ("tasks/level1/006_maxpool2d.py", None),
    ("tasks/level2/087_linear_mish_groupnorm_scale_residualadd_clamp.py", None),
    ("tasks/fixtures/level1/003_softmax.native.cu", None),
    ("tasks/fixtures/level1/002_relu.host.cpp", None),
    ("tasks/fixtures/level1/009_matvec.native.cu", None),
    ("include/kernelrl/abi.h", 6000),
    ("prompts/format_native.txt", None),
    ("prompts/base.txt", None),
    ("docs/abi.md", 4000),
    ("README.md", 3000),
    ("tasks/level2/manifest.json", 2000),
]

CONVERSATIONS = [
    ("user_only", [{"role": "user", "content": "Write a CUDA kernel that adds two vectors."}], True),
    ("with_system", [
        {"role": "system", "content": "You write fast, correct CUDA kernels."},
        {"role": "user", "content": "Softmax over rows of a 4096x32768 matrix, please."},
        {"role": "assistant", "content": "```cuda\n__global__ void softmax(...) {}\n```\nUses one block per row."},
        {"role": "user", "content": "It failed: WRONG_OUTPUT (max error 0.5). Fix it."},
    ], True),
    ("no_generation_prompt", [
        {"role": "user", "content": "Hi!"},
        {"role": "assistant", "content": "Hello — how can I help? 😊"},
    ], False),
    ("unicode_and_specials", [
        {"role": "user", "content": "Explain <|im_end|> and 数字 123\n\n  indented"},
    ], True),
]

# Qwen2-Instruct's chat template: another ChatML family member with its own default system message.
QWEN2_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def read_gguf_tokenizer(path):
    reader = gguf.GGUFReader(path)

    def field(key, default=None):
        return reader.fields[key].contents() if key in reader.fields else default

    tokenizer_dict = {
        "tokenizer_type": field("tokenizer.ggml.model"),
        "pre_tokenizer_type": field("tokenizer.ggml.pre"),
        "tokens": field("tokenizer.ggml.tokens"),
        "token_type": field("tokenizer.ggml.token_type"),
        "merges": field("tokenizer.ggml.merges"),
        "bos_token_id": field("tokenizer.ggml.bos_token_id"),
        "eos_token_id": field("tokenizer.ggml.eos_token_id"),
        "pad_token_id": field("tokenizer.ggml.padding_token_id"),
    }
    return field("general.architecture"), tokenizer_dict, field("tokenizer.chat_template")


def with_pipeline(base_json, name):
    steps, ignore_merges = PIPELINES[name]
    tok = Tokenizer.from_str(base_json)
    tok.pre_tokenizer = pre_tokenizers.Sequence(steps) if len(steps) > 1 else steps[0]
    spec = json.loads(tok.to_str())
    spec["model"]["ignore_merges"] = ignore_merges
    return Tokenizer.from_str(json.dumps(spec))


def corpus():
    texts = []
    for rel, max_chars in CORPUS_FILES:
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            text = f.read()
        texts.append(("file:" + rel, text[:max_chars] if max_chars else text))
    texts += sorted(EDGE_CASES.items())
    return texts


def pre_tokenizer_cases():
    texts = [EDGE_CASES[k] for k in ("spaces", "digits", "contractions", "cuda_snippet", "emoji", "crlf")]
    cases = []
    for behavior in ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"):
        for invert in (False, True):
            for pattern_kind, pattern in (("regex", r"\s+|[0-9]"), ("string", " ")):
                pat = Regex(pattern) if pattern_kind == "regex" else pattern
                pre = pre_tokenizers.Split(pat, behavior=behavior, invert=invert)
                for text in texts:
                    cases.append({"step": json.loads(pre.__getstate__()), "text": text,
                                  "pieces": [p for p, _ in pre.pre_tokenize_str(text)]})
    for individual in (True, False):
        pre = pre_tokenizers.Digits(individual_digits=individual)
        for text in (EDGE_CASES["digits"], EDGE_CASES["digit_scripts"]):
            cases.append({"step": json.loads(pre.__getstate__()), "text": text,
                          "pieces": [p for p, _ in pre.pre_tokenize_str(text)]})
    return cases


# Added tokens with the flags SmolLM2's own do not use, appended after its vocabulary.
EXTRA_ADDED_TOKENS = [
    {"id": 49152, "content": "<mask>", "single_word": False, "lstrip": True, "rstrip": False,
     "normalized": False, "special": True},
    {"id": 49153, "content": "[SEP]", "single_word": False, "lstrip": False, "rstrip": True,
     "normalized": False, "special": False},
    {"id": 49154, "content": "kernel", "single_word": False, "lstrip": False, "rstrip": False,
     "normalized": True, "special": False},
    {"id": 49155, "content": "<mask><mask>", "single_word": False, "lstrip": False, "rstrip": False,
     "normalized": False, "special": True},
]
EXTRA_ADDED_TEXTS = [
    "fill   <mask> here", "two\t \n<mask><mask> masks", "<mask><mask><mask>", "a [SEP]   b [SEP]\n\nc",
    "kernels: my_kernel<<<1, 1>>>, KERNEL, kernel[SEP] x", " \u3000<mask>[SEP]\u3000 end",
]


def added_tokens_golden(reference):
    spec = json.loads(reference.to_str())
    spec["added_tokens"] += EXTRA_ADDED_TOKENS
    tok = Tokenizer.from_str(json.dumps(spec))
    cases = []
    for text in EXTRA_ADDED_TEXTS:
        tok.encode_special_tokens = False
        ids = tok.encode(text, add_special_tokens=False).ids
        tok.encode_special_tokens = True
        cases.append({"text": text, "ids": ids, "ids_no_special": tok.encode(text, add_special_tokens=False).ids})
    return {"added_tokens": EXTRA_ADDED_TOKENS, "cases": cases}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gguf", default=os.path.join(ROOT, ".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf"))
    parser.add_argument("--out", default=os.path.join(ROOT, "tests/data/tokenizer"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    architecture, tokenizer_dict, chat_template = read_gguf_tokenizer(args.gguf)
    assert tokenizer_dict["pre_tokenizer_type"] == "smollm", tokenizer_dict["pre_tokenizer_type"]
    converted, _ = convert_gguf_tokenizer(architecture, tokenizer_dict)
    base_json = converted.to_str()
    tokenizers_by_pre = {name: with_pipeline(base_json, name) for name in PIPELINES}
    reference = tokenizers_by_pre["smollm"]

    # The converted file must carry the GGUF's vocabulary unchanged, so the C++ tests may build a
    # TokenizerSpec from it as the GGUF would give it.
    spec = json.loads(reference.to_str())
    by_id = sorted(spec["model"]["vocab"].items(), key=lambda kv: kv[1])
    assert [t for t, _ in by_id] == list(tokenizer_dict["tokens"]), "vocabulary differs from the GGUF"
    assert [" ".join(m) for m in spec["model"]["merges"]] == list(tokenizer_dict["merges"]), "merges differ"
    control = {i for i, t in enumerate(tokenizer_dict["token_type"]) if t == 3}
    assert {t["id"] for t in spec["added_tokens"] if t["special"]} == control, "special tokens differ"
    # A model folder as save_pretrained writes it, but with the tokenizer.json compact (save()
    # pretty-prints it to twice the size).
    model_dir = os.path.join(args.out, "smollm2")
    os.makedirs(model_dir, exist_ok=True)
    tokens = tokenizer_dict["tokens"]
    hf = PreTrainedTokenizerFast(
        tokenizer_object=reference, chat_template=chat_template,
        bos_token=tokens[tokenizer_dict["bos_token_id"]], eos_token=tokens[tokenizer_dict["eos_token_id"]],
        pad_token=tokens[tokenizer_dict["pad_token_id"]], unk_token=tokens[0])
    with tempfile.TemporaryDirectory() as tmp:
        hf.save_pretrained(tmp)
        for name in ("tokenizer_config.json", "chat_template.jinja"):
            shutil.copy(os.path.join(tmp, name), os.path.join(model_dir, name))
    tokenizer_json_path = os.path.join(model_dir, "tokenizer.json")
    with open(tokenizer_json_path, "w", encoding="utf-8") as f:
        f.write(reference.to_str())
    size_mb = os.path.getsize(tokenizer_json_path) / 2**20
    assert size_mb < 3, f"{tokenizer_json_path} is {size_mb:.1f} MB; too big to ship"

    n_ids, n_gpt2_differs = 0, 0
    unpatched = Tokenizer.from_str(base_json)  # transformers' conversion as is (no Digits step)
    with open(os.path.join(args.out, "encode_golden.jsonl"), "w", encoding="utf-8") as f:
        texts = corpus()
        for name, text in texts:
            ids = {pre: tok.encode(text, add_special_tokens=False).ids for pre, tok in tokenizers_by_pre.items()}
            reference.encode_special_tokens = True
            ids_no_special = reference.encode(text, add_special_tokens=False).ids
            reference.encode_special_tokens = False
            n_ids += len(ids["smollm"])
            n_gpt2_differs += unpatched.encode(text, add_special_tokens=False).ids != ids["smollm"]
            record = {"name": name, "text": text, "ids": ids, "ids_no_special": ids_no_special,
                      "decoded_skip_special": reference.decode(ids["smollm"], skip_special_tokens=True)}
            f.write(json.dumps(record, ensure_ascii=False) + "\n")

    with open(os.path.join(args.out, "pre_tokenizer_golden.jsonl"), "w", encoding="utf-8") as f:
        for case in pre_tokenizer_cases():
            f.write(json.dumps(case, ensure_ascii=False) + "\n")

    with open(os.path.join(args.out, "added_tokens_golden.json"), "w", encoding="utf-8") as f:
        json.dump(added_tokens_golden(reference), f, ensure_ascii=False, indent=1)

    chats = {"templates": {"smollm2": chat_template, "qwen2": QWEN2_TEMPLATE}, "renders": []}
    for template_name, template in chats["templates"].items():
        hf = PreTrainedTokenizerFast(tokenizer_object=reference, chat_template=template)
        for conv_name, messages, add_generation_prompt in CONVERSATIONS:
            text = hf.apply_chat_template(messages, tokenize=False, add_generation_prompt=add_generation_prompt)
            chats["renders"].append({
                "template": template_name, "name": conv_name, "messages": messages,
                "add_generation_prompt": add_generation_prompt, "text": text,
                "ids": reference.encode(text, add_special_tokens=False).ids})
    with open(os.path.join(args.out, "chat_golden.json"), "w", encoding="utf-8") as f:
        json.dump(chats, f, ensure_ascii=False, indent=1)

    print(f"{len(texts)} texts, {n_ids} ids (smollm pipeline); tokenizer.json {size_mb:.2f} MB; "
          f"transformers' unpatched GGUF conversion differs on {n_gpt2_differs} texts", file=sys.stderr)


if __name__ == "__main__":
    main()
