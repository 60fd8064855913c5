// Throughput of the policy model on one device, with random weights of a SmolLM2-135M-shaped
// config: (a) the training update, forward + backward + AdamW step on batch x seq tokens, float32
// master weights under bfloat16 autocast (the faithful mixed-precision step; transformers' baseline
// in bench/hf_model_bench.py runs the same recipe); (b) sampling, prompt 512 + 512 new tokens at
// temperature 0.9 with no early stop, at batches 64 and 256, bfloat16 weights; on CUDA in three
// modes: the default (CUDA graph, the model's decode attention kernel), the graph with libtorch's
// attention (`_sdpa` rows) and the eager loop (`_eager` rows). Without CUDA it runs
// on the CPU with tiny batches, labelled as such; --tiny shrinks the model too (for tests).
// Prints `row <name> <value> <unit>` lines (medians; spread in the comment lines), the same names
// as bench/hf_model_bench.py so a script can print ratios.
//
// --dump-logits DIR: loads the Hugging Face checkpoint in DIR (built with kernelrl_checkpoint),
// runs a fixed left-padded two-row prompt in float32 and writes DIR/kernelrl_logits.json (prompt,
// mask, positions, shape) and DIR/kernelrl_logits.f32 (raw little-endian [B, T, vocab]) for
// scripts/hf_logits_check.py to compare with transformers.
//
// usage: kernelrl_model_bench [--tiny] [--cpu] [--update-batch N] [--update-seq N] [--iters N]
//                             [--sample-batches 64,256] [--prompt N] [--new N] [--skip-update]
//                             [--skip-sample] [--reps N] [--modes default,sdpa,eager]
//                             [--profile TRACE.json] [--dump-logits DIR]
//
// --profile TRACE.json (CUDA): one more generation in the default mode at the largest batch, at
// most 32 new tokens, under libtorch's Kineto profiler; its Chrome trace (every kernel with its GPU
// time) goes to TRACE.json for bench/decode_profile.py.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/cuda.h>
#include <torch/optim/adamw.h>
#include <torch/version.h>

#include "common/provenance.hpp"
#include "model/autocast.hpp"
#include "model/decode_kernels.hpp"
#include "model/decode_graph.hpp"
#include "model/sampler.hpp"
#include "model/transformer.hpp"
#ifdef KERNELRL_MODEL_BENCH_HAS_CHECKPOINT
#include "weights/checkpoint.hpp"
#endif

#define KERNELRL_TORCH_HAS_FUSED_ADAMW \
  (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))

using namespace kernelrl;

namespace {

struct Options {
  bool tiny = false;
  bool cpu = false;
  std::int64_t update_batch = 32, update_seq = 1024, iters = 5;
  std::vector<std::int64_t> sample_batches{64, 256};
  std::int64_t prompt = 512, new_tokens = 512;
  bool skip_update = false, skip_sample = false;
  std::int64_t reps = 3;                                       // timed generations per mode (median)
  std::vector<std::string> modes{"default", "sdpa", "eager"};  // sampling modes on CUDA
  std::string dump_logits;
  std::string profile_trace;
};

weights::ModelConfig smollm2_135m() {
  weights::ModelConfig c;
  c.architecture = "llama";
  c.vocab_size = 49152;
  c.hidden_size = 576;
  c.intermediate_size = 1536;
  c.n_layers = 30;
  c.n_heads = 9;
  c.n_kv_heads = 3;
  c.head_dim = 64;
  c.rope_theta = 100000.0;
  c.rms_norm_eps = 1e-5;
  c.max_position = 8192;
  c.tie_word_embeddings = true;
  return c;
}

weights::ModelConfig tiny_config() {
  auto c = smollm2_135m();
  c.vocab_size = 512;
  c.hidden_size = 64;
  c.intermediate_size = 128;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.head_dim = 16;
  return c;
}

// "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> items;
  for (std::string s = text; !s.empty();) {
    const auto comma = s.find(',');
    items.push_back(s.substr(0, comma));
    s = comma == std::string::npos ? "" : s.substr(comma + 1);
  }
  return items;
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    auto number = [&](std::int64_t& out) {
      const char* v = next();
      if (v == nullptr) return false;
      out = std::atoll(v);
      return out > 0;
    };
    bool ok = true;
    if (a == "--tiny") {
      o.tiny = true;
    } else if (a == "--cpu") {
      o.cpu = true;
    } else if (a == "--skip-update") {
      o.skip_update = true;
    } else if (a == "--skip-sample") {
      o.skip_sample = true;
    } else if (a == "--update-batch") {
      ok = number(o.update_batch);
    } else if (a == "--update-seq") {
      ok = number(o.update_seq);
    } else if (a == "--iters") {
      ok = number(o.iters);
    } else if (a == "--prompt") {
      ok = number(o.prompt);
    } else if (a == "--new") {
      ok = number(o.new_tokens);
    } else if (a == "--sample-batches") {
      const char* v = next();
      ok = v != nullptr;
      o.sample_batches.clear();
      for (const auto& item : ok ? comma_list(v) : std::vector<std::string>{}) {
        o.sample_batches.push_back(std::atoll(item.c_str()));
        ok = ok && o.sample_batches.back() > 0;
      }
    } else if (a == "--reps") {
      ok = number(o.reps);
    } else if (a == "--modes") {
      const char* v = next();
      ok = v != nullptr;
      o.modes = ok ? comma_list(v) : std::vector<std::string>{};
      for (const auto& m : o.modes) ok = ok && (m == "default" || m == "sdpa" || m == "eager");
    } else if (a == "--profile") {
      const char* v = next();
      ok = v != nullptr;
      if (ok) o.profile_trace = v;
    } else if (a == "--dump-logits") {
      const char* v = next();
      ok = v != nullptr;
      if (ok) o.dump_logits = v;
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "kernelrl_model_bench: bad or incomplete argument %s (see the usage in bench/model_bench.cpp)\n",
                   a.c_str());
      return false;
    }
  }
  return true;
}

void sync(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Spread {
  double median, min, max;
};

Spread spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

// AdamW (torch.optim.AdamW's defaults but lr 1e-5): one fused kernel set on libtorch >= 2.4 (what
// torch.optim.AdamW(fused=True) runs), libtorch's per-parameter AdamW before.
class AdamW {
 public:
  explicit AdamW(std::vector<torch::Tensor> params) : params_(std::move(params)) {
#if KERNELRL_TORCH_HAS_FUSED_ADAMW
    for (const auto& p : params_) {
      exp_avg_.push_back(torch::zeros_like(p));
      exp_avg_sq_.push_back(torch::zeros_like(p));
      steps_.push_back(torch::zeros({}, p.options().dtype(torch::kFloat32)));
    }
#else
    optimizer_ = std::make_unique<torch::optim::AdamW>(params_, torch::optim::AdamWOptions(lr_).weight_decay(0.01));
#endif
  }
  std::string kind() const { return KERNELRL_TORCH_HAS_FUSED_ADAMW ? "fused" : "per-parameter"; }
  void step() {
#if KERNELRL_TORCH_HAS_FUSED_ADAMW
    std::vector<torch::Tensor> grads;
    for (const auto& p : params_) grads.push_back(p.grad());
    torch::NoGradGuard no_grad;
    at::_foreach_add_(steps_, 1.0);
    at::_fused_adamw_(params_, grads, exp_avg_, exp_avg_sq_, {}, steps_, lr_, 0.9, 0.999, 0.01, 1e-8,
                      /*amsgrad=*/false, /*maximize=*/false);
#else
    optimizer_->step();
#endif
  }
  void zero_grad() {
    for (auto& p : params_) p.mutable_grad() = torch::Tensor();
  }

 private:
  double lr_ = 1e-5;
  std::vector<torch::Tensor> params_;
#if KERNELRL_TORCH_HAS_FUSED_ADAMW
  std::vector<torch::Tensor> exp_avg_, exp_avg_sq_, steps_;
#else
  std::unique_ptr<torch::optim::AdamW> optimizer_;
#endif
};

void bench_update(const weights::ModelConfig& config, const torch::Device& device, const Options& o) {
  torch::manual_seed(0);
  model::Transformer net(config);
  net->to(device, torch::kFloat32);
  AdamW optimizer(net->parameters());
  const auto b = o.update_batch, t = o.update_seq;
  auto ids = torch::randint(0, config.vocab_size, {b, t + 1}, torch::TensorOptions().dtype(torch::kInt64).device(device));
  auto inputs = ids.narrow(1, 0, t), targets = ids.narrow(1, 1, t);
  const bool autocast = device.is_cuda();  // CPU bfloat16 autocast is slower than float32 there
  std::printf("# update: batch %lld x %lld tokens, float32 weights%s, next-token loss via token_logprobs, %s AdamW\n",
              static_cast<long long>(b), static_cast<long long>(t), autocast ? " + bfloat16 autocast" : "",
              optimizer.kind().c_str());
  std::vector<double> times;
  double loss_value = 0;
  for (std::int64_t i = 0; i < o.iters + 2; ++i) {
    sync(device);
    const auto start = std::chrono::steady_clock::now();
    {
      std::optional<model::AutocastScope> scope;
      if (autocast) scope.emplace(device.type(), torch::kBFloat16);
      auto loss = -net->token_logprobs(inputs, targets).logprobs.mean();
      loss.backward();
      if (i == 0) loss_value = loss.item<double>();
    }
    optimizer.step();
    optimizer.zero_grad();
    sync(device);
    if (i >= 2) times.push_back(seconds_since(start));  // two warm-up steps
  }
  const auto s = spread(times);
  const double tokens = static_cast<double>(b * t);
  std::printf("# update: first loss %.4f (ln vocab %.4f); step %.1f ms median, %.1f..%.1f over %zu steps\n",
              loss_value, std::log(static_cast<double>(config.vocab_size)), s.median * 1e3, s.min * 1e3,
              s.max * 1e3, times.size());
  std::printf("row update_step_ms %.2f ms\n", s.median * 1e3);
  std::printf("row update_tokens_per_s %.0f tokens/s\n", tokens / s.median);
}

void bench_sampling(const weights::ModelConfig& config, const torch::Device& device, const Options& o) {
  torch::manual_seed(0);
  model::Transformer net(config);
  const auto dtype = device.is_cuda() ? torch::kBFloat16 : torch::kFloat32;
  net->to(device, dtype);
  model::SamplingParams params;
  params.temperature = 0.9;
  params.max_new_tokens = o.new_tokens;
  params.seed = 1;
  // The modes of the file comment, same prompts and seed; on the CPU only the default.
  struct Mode {
    std::string name, row_suffix;
    bool graphs, kernel;
  };
  std::vector<Mode> modes;
  for (const auto& name : o.modes) {
    if (name == "default") modes.push_back({name, "", true, true});
    if (!device.is_cuda()) continue;
    if (name == "sdpa" && model::decode_kernels_built()) modes.push_back({name, "_sdpa", true, false});
    if (name == "eager" && model::cuda_graphs_available()) modes.push_back({name, "_eager", false, true});
  }
  for (auto batch : o.sample_batches) {
    std::vector<std::vector<std::int64_t>> prompts(batch);
    auto ids = torch::randint(0, config.vocab_size, {batch, o.prompt}, torch::kInt64);
    for (std::int64_t r = 0; r < batch; ++r) {
      prompts[r].assign(ids[r].data_ptr<std::int64_t>(), ids[r].data_ptr<std::int64_t>() + o.prompt);
    }
    for (const auto& mode : modes) {
      params.cuda_graphs = mode.graphs;
      model::set_decode_kernels_enabled(mode.kernel);
      auto warm = params;
      warm.max_new_tokens = std::min<std::int64_t>(8, o.new_tokens);
      if (auto w = model::generate(net, prompts, warm); !w) {
        std::fprintf(stderr, "kernelrl_model_bench: %s\n", w.error().message.c_str());
        std::exit(1);
      }
      std::vector<double> times;
      std::int64_t n_new = 0;
      for (std::int64_t rep = 0; rep < o.reps; ++rep) {
        sync(device);
        const auto start = std::chrono::steady_clock::now();
        auto samples = model::generate(net, prompts, params);
        sync(device);
        times.push_back(seconds_since(start));
        if (!samples) {
          std::fprintf(stderr, "kernelrl_model_bench: %s\n", samples.error().message.c_str());
          std::exit(1);
        }
        n_new = 0;
        for (const auto& s : *samples) n_new += static_cast<std::int64_t>(s.token_ids.size());
      }
      const auto s = spread(times);
      const bool graphed = mode.graphs && device.is_cuda() && model::cuda_graphs_available();
      const bool kernel = mode.kernel && device.is_cuda() && model::decode_kernels_built();
      std::printf("# sample (%s, %s attention): batch %lld, prompt %lld, %lld new tokens in total, %s weights; %.3f s (%.3f..%.3f over %zu)\n",
                  graphed ? "CUDA graph" : "eager", kernel ? "decode kernel" : "libtorch", static_cast<long long>(batch),
                  static_cast<long long>(o.prompt), static_cast<long long>(n_new),
                  dtype == torch::kBFloat16 ? "bfloat16" : "float32", s.median, s.min, s.max, times.size());
      std::printf("row sample_b%lld%s_new_tokens_per_s %.0f tokens/s\n", static_cast<long long>(batch),
                  mode.row_suffix.c_str(), static_cast<double>(n_new) / s.median);
    }
  }
  model::set_decode_kernels_enabled(true);
  if (o.profile_trace.empty()) return;
  if (!device.is_cuda()) {
    std::printf("# profile: skipped (no CUDA device)\n");
    return;
  }
  const auto batch = *std::max_element(o.sample_batches.begin(), o.sample_batches.end());
  params.cuda_graphs = true;
  params.max_new_tokens = std::min<std::int64_t>(32, o.new_tokens);
  std::vector<std::vector<std::int64_t>> prompts(batch, std::vector<std::int64_t>(o.prompt));
  for (std::int64_t r = 0; r < batch; ++r) {
    for (std::int64_t i = 0; i < o.prompt; ++i) prompts[r][i] = (r * 7919 + i * 104729) % config.vocab_size;
  }
  namespace prof = torch::profiler::impl;
  const prof::ProfilerConfig profiler_config(prof::ProfilerState::KINETO);
  const std::set<prof::ActivityType> activities{prof::ActivityType::CPU, prof::ActivityType::CUDA};
  torch::autograd::profiler::prepareProfiler(profiler_config, activities);
  torch::autograd::profiler::enableProfiler(profiler_config, activities);
  auto samples = model::generate(net, prompts, params);
  sync(device);
  auto result = torch::autograd::profiler::disableProfiler();
  if (!samples) {
    std::fprintf(stderr, "kernelrl_model_bench: %s\n", samples.error().message.c_str());
    std::exit(1);
  }
  result->save(o.profile_trace);
  std::printf("# profile: batch %lld, prompt %lld, %lld new tokens, trace %s\n", static_cast<long long>(batch),
              static_cast<long long>(o.prompt), static_cast<long long>(params.max_new_tokens),
              o.profile_trace.c_str());
}

int dump_logits(const std::filesystem::path& dir, const torch::Device& device) {
#ifdef KERNELRL_MODEL_BENCH_HAS_CHECKPOINT
  auto checkpoint = weights::load_checkpoint(dir, torch::kFloat32);
  if (!checkpoint) {
    std::fprintf(stderr, "kernelrl_model_bench: %s\n", checkpoint.error().message.c_str());
    return 1;
  }
  auto net = model::make_transformer(checkpoint->config);
  if (!net) {
    std::fprintf(stderr, "kernelrl_model_bench: %s\n", net.error().message.c_str());
    return 1;
  }
  if (auto loaded = (*net)->load_weights(checkpoint->tensors); !loaded) {
    std::fprintf(stderr, "kernelrl_model_bench: %s\n", loaded.error().message.c_str());
    return 1;
  }
  (*net)->to(device, torch::kFloat32);
  // Row 0: 16 tokens; row 1: 10 tokens, left-padded with 6 pad slots.
  const std::int64_t t = 16, vocab = checkpoint->config.vocab_size;
  std::vector<std::vector<std::int64_t>> ids(2, std::vector<std::int64_t>(t, 0)), mask = ids, positions = ids;
  for (std::int64_t i = 0; i < t; ++i) {
    ids[0][i] = (i * 7919 + 13) % vocab;
    mask[0][i] = 1;
    positions[0][i] = i;
    if (i >= 6) {
      ids[1][i] = (i * 104729 + 5) % vocab;
      mask[1][i] = 1;
      positions[1][i] = i - 6;
    }
  }
  auto tensor = [&](const std::vector<std::vector<std::int64_t>>& rows) {
    auto out = torch::empty({2, t}, torch::kInt64);
    for (int r = 0; r < 2; ++r) {
      for (std::int64_t i = 0; i < t; ++i) out[r][i] = rows[r][i];
    }
    return out.to(device);
  };
  torch::NoGradGuard no_grad;
  auto logits = (*net)->forward(tensor(ids), tensor(positions), nullptr, tensor(mask)).to(torch::kCPU).contiguous();
  nlohmann::json meta{{"input_ids", ids},          {"attention_mask", mask},
                      {"position_ids", positions}, {"shape", {2, t, vocab}},
                      {"dtype", "float32"},        {"file", "kernelrl_logits.f32"},
                      {"device", device.str()},    {"commit", common::project_commit()}};
  std::ofstream(dir / "kernelrl_logits.json") << meta.dump(2) << "\n";
  std::ofstream data(dir / "kernelrl_logits.f32", std::ios::binary);
  data.write(reinterpret_cast<const char*>(logits.data_ptr<float>()),
             static_cast<std::streamsize>(logits.numel() * sizeof(float)));
  if (!data) {
    std::fprintf(stderr, "kernelrl_model_bench: cannot write %s\n", (dir / "kernelrl_logits.f32").c_str());
    return 1;
  }
  std::printf("wrote %s and kernelrl_logits.f32 ([2, %lld, %lld] float32, %s)\n",
              (dir / "kernelrl_logits.json").c_str(), static_cast<long long>(t), static_cast<long long>(vocab),
              device.str().c_str());
  return 0;
#else
  (void)device;
  std::fprintf(stderr, "kernelrl_model_bench: --dump-logits %s needs kernelrl_checkpoint, which this build lacks\n",
               dir.c_str());
  return 1;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  const bool cuda = !o.cpu && torch::cuda::is_available();
  const torch::Device device = cuda ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  try {
    if (!o.dump_logits.empty()) return dump_logits(o.dump_logits, device);
    auto config = o.tiny ? tiny_config() : smollm2_135m();
    if (o.tiny || !cuda) {
      // Sizes a CPU finishes in seconds; explicit flags still win.
      auto shrink = [](std::int64_t& value, std::int64_t small, std::int64_t default_value) {
        if (value == default_value) value = small;
      };
      shrink(o.update_batch, 2, 32);
      shrink(o.update_seq, o.tiny ? 64 : 128, 1024);
      shrink(o.prompt, o.tiny ? 16 : 32, 512);
      shrink(o.new_tokens, 16, 512);
      shrink(o.iters, 3, 5);
      if (o.sample_batches == std::vector<std::int64_t>{64, 256}) o.sample_batches = {2, 4};
    }
    std::printf("# kernelrl_model_bench: device %s%s, libtorch %s, commit %s\n", device.str().c_str(),
                cuda ? "" : " (CPU: tiny batches, not comparable with GPU numbers)", TORCH_VERSION,
                common::project_commit().c_str());
    std::printf("# model: %s, vocab %lld, hidden %lld, %lld layers, %lld/%lld heads, head_dim %lld, tied, random weights\n",
                o.tiny ? "tiny (test size)" : "SmolLM2-135M shape", static_cast<long long>(config.vocab_size),
                static_cast<long long>(config.hidden_size), static_cast<long long>(config.n_layers),
                static_cast<long long>(config.n_heads), static_cast<long long>(config.n_kv_heads),
                static_cast<long long>(config.head_dim));
    if (!o.skip_update) bench_update(config, device, o);
    if (!o.skip_sample) bench_sampling(config, device, o);
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "kernelrl_model_bench: %s\n", e.what_without_backtrace());
    return 1;
  }
  return 0;
}
