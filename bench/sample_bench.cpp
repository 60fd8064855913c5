// Sampling speed of the default policy model as `kernelrl train` holds it on the CPU: the GGUF file
// loaded by policy::load_policy_model (float32 weights), then model::generate on `--batch` prompts
// of `--prompt` seeded random token ids, `--new` tokens each (no stop, so every row runs to the
// end). Prints the BLAS library the process loaded (libtorch's libblas.so.3, chosen by Debian's
// alternatives or LD_LIBRARY_PATH), the prefill alone (one new token) and the whole generation, as
// `row <name> <value> <unit>` lines (medians over --reps; spread in the comment lines).
// bench/blas_sampling.sh runs it with each BLAS and prints the ratio.
//
// usage: kernelrl_sample_bench [--model PATH] [--device cpu|cuda|auto] [--batch N] [--prompt N]
//                              [--new N] [--reps N]
#include <link.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <ATen/Parallel.h>
#include <torch/types.h>

#include "kernelrl/build_config.hpp"
#include "model/sampler.hpp"
#include "policy/policy_model.hpp"

using namespace kernelrl;

namespace {

struct Options {
  std::string model = std::string(build::source_dir) + "/.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf";
  std::string device = "cpu";
  std::int64_t batch = 2, prompt = 64, new_tokens = 32, reps = 3;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "kernelrl_sample_bench: %s\nusage: kernelrl_sample_bench [--model PATH] [--device cpu|cuda|auto] "
               "[--batch N] [--prompt N] [--new N] [--reps N]\n",
               why.c_str());
  std::exit(64);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage("option " + a + " needs a value");
    const std::string v = argv[++i];
    auto positive = [&](std::int64_t& out) {
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0' || n <= 0) usage(a + " wants a positive integer, got '" + v + "'");
      out = n;
    };
    if (a == "--model") o.model = v;
    else if (a == "--device") o.device = v;
    else if (a == "--batch") positive(o.batch);
    else if (a == "--prompt") positive(o.prompt);
    else if (a == "--new") positive(o.new_tokens);
    else if (a == "--reps") positive(o.reps);
    else usage("unknown option " + a);
  }
  return o;
}

// The BLAS library this process loaded, resolved through symbolic links; "none" when none is.
std::string loaded_blas() {
  std::string found = "none";
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (name.find("libblas") == std::string::npos && name.find("openblas") == std::string::npos) return 0;
        std::error_code ec;
        const auto real = std::filesystem::canonical(name, ec);
        *static_cast<std::string*>(out) = ec ? name : real.string();
        return 1;
      },
      &found);
  return found;
}

struct Spread {
  double median, min, max;
};

Spread spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  auto policy = policy::load_policy_model(o.model, "", o.device);
  if (!policy) {
    std::fprintf(stderr, "kernelrl_sample_bench: %s\n", policy.error().message.c_str());
    return 1;
  }
  const std::int64_t vocab = policy->tokenizer.vocab_size();
  std::printf("blas %s\n", loaded_blas().c_str());
  std::printf("# model %s on %s, float32 weights; torch threads %d; batch %lld, prompt %lld, %lld new tokens per row\n",
              o.model.c_str(), policy->device.str().c_str(), at::get_num_threads(), static_cast<long long>(o.batch),
              static_cast<long long>(o.prompt), static_cast<long long>(o.new_tokens));

  torch::manual_seed(7);
  const auto ids = torch::randint(0, vocab, {o.batch, o.prompt}, torch::kInt64);
  std::vector<std::vector<std::int64_t>> prompts(static_cast<std::size_t>(o.batch));
  for (std::int64_t r = 0; r < o.batch; ++r) {
    prompts[static_cast<std::size_t>(r)].assign(ids[r].data_ptr<std::int64_t>(), ids[r].data_ptr<std::int64_t>() + o.prompt);
  }
  // One timed generate of `n` new tokens per row; returns the seconds and checks every row got n.
  auto timed = [&](std::int64_t n) {
    model::SamplingParams params;
    params.temperature = 0.9;
    params.max_new_tokens = n;
    params.seed = 1;
    const auto start = std::chrono::steady_clock::now();
    auto samples = model::generate(policy->model, prompts, params);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!samples) {
      std::fprintf(stderr, "kernelrl_sample_bench: %s\n", samples.error().message.c_str());
      std::exit(1);
    }
    for (const auto& row : *samples) {
      if (static_cast<std::int64_t>(row.token_ids.size()) != n) {
        std::fprintf(stderr, "kernelrl_sample_bench: a row has %zu new tokens, not %lld\n", row.token_ids.size(),
                     static_cast<long long>(n));
        std::exit(1);
      }
    }
    return s;
  };
  timed(1);  // warm-up: first-touch allocations, thread pools
  std::vector<double> prefill, whole;
  for (std::int64_t rep = 0; rep < o.reps; ++rep) {
    prefill.push_back(timed(1));
    whole.push_back(timed(o.new_tokens));
  }
  const auto p = spread(prefill), w = spread(whole);
  const double new_total = static_cast<double>(o.batch * o.new_tokens);
  std::printf("# prefill (1 new token): %.3f s (%.3f..%.3f over %zu)\n", p.median, p.min, p.max, prefill.size());
  std::printf("# generation: %.3f s (%.3f..%.3f over %zu)\n", w.median, w.min, w.max, whole.size());
  std::printf("row prefill_tokens_per_s %.1f tokens/s\n", static_cast<double>(o.batch * o.prompt) / p.median);
  std::printf("row sample_new_tokens_per_s %.2f tokens/s\n", new_total / w.median);
  // Decode alone: the generation less its prefill (same prompts, same seed).
  std::printf("row decode_new_tokens_per_s %.2f tokens/s\n",
              (new_total - static_cast<double>(o.batch)) / std::max(1e-9, w.median - p.median));
  return 0;
}
