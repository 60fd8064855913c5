// Chunked log-probabilities of chosen tokens and entropies, with a hand-written backward:
//   d logp_y / dz = onehot(y) - p,   d H / dz = -p * (log p + H),   z = logits / temperature.
// Each chunk's logits are recomputed in backward; the softmax reads the low-precision logits in
// one kernel and the logits' gradient is written once, in the dtype the GEMMs read.
#include "model/linear_logprobs.hpp"

#include <algorithm>

#include <torch/csrc/autograd/custom_function.h>

#include "model/autocast.hpp"

namespace kernelrl::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct Dtypes {
  torch::ScalarType compute;  // matmuls
  torch::ScalarType stats;    // logits, softmax, gradients of the logits
};

Dtypes dtypes_for(const torch::Tensor& weight) {
  const auto device_type = weight.device().type();
  const auto compute = autocast_enabled(device_type) ? autocast_dtype(device_type) : weight.scalar_type();
  return {compute, compute == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32};
}

// log_softmax(h @ w^T / temperature) for one chunk of rows, in the statistics dtype. Without a
// temperature this is one kernel reading the low-precision logits (no float32 copy of them first).
torch::Tensor chunk_log_softmax(const torch::Tensor& h, const torch::Tensor& w_compute, const Dtypes& dt,
                                double temperature) {
  auto z = at::mm(h.to(dt.compute), w_compute.t());
  if (temperature != 1.0) return at::log_softmax(z.to(dt.stats).div_(temperature), -1);
  return at::log_softmax(z, -1, dt.stats);
}

// softmax of the same, for the backward of the log-probs alone.
torch::Tensor chunk_softmax(const torch::Tensor& h, const torch::Tensor& w_compute, const Dtypes& dt,
                            double temperature) {
  auto z = at::mm(h.to(dt.compute), w_compute.t());
  if (temperature != 1.0) return at::softmax(z.to(dt.stats).div_(temperature), -1);
  return at::softmax(z, -1, dt.stats);
}

// Row-wise sum(p * logp) without a [rows, vocab] temporary.
torch::Tensor row_dot(const torch::Tensor& p, const torch::Tensor& logp) {
  return at::bmm(p.unsqueeze(1), logp.unsqueeze(2)).view({p.size(0), 1});
}

struct LinearLogprobsFn : public torch::autograd::Function<LinearLogprobsFn> {
  static variable_list forward(AutogradContext* ctx, torch::Tensor hidden, torch::Tensor weight, torch::Tensor targets,
                               std::int64_t chunk_rows, bool with_entropy, double temperature) {
    const auto dt = dtypes_for(weight);
    const auto n = hidden.size(0);
    auto stats_options = hidden.options().dtype(dt.stats);
    auto logprobs = torch::empty({n}, stats_options);
    auto entropy = torch::zeros({with_entropy ? n : 0}, stats_options);
    const auto w = weight.to(dt.compute);
    for (std::int64_t start = 0; start < n; start += chunk_rows) {
      const auto rows = std::min(chunk_rows, n - start);
      const auto logp = chunk_log_softmax(hidden.narrow(0, start, rows), w, dt, temperature);
      logprobs.narrow(0, start, rows).copy_(logp.gather(1, targets.narrow(0, start, rows).unsqueeze(1)).squeeze(1));
      if (with_entropy) entropy.narrow(0, start, rows).copy_(-row_dot(logp.exp(), logp).squeeze(1));
    }
    ctx->save_for_backward({hidden, weight, targets});
    ctx->saved_data["chunk_rows"] = chunk_rows;
    ctx->saved_data["with_entropy"] = with_entropy;
    ctx->saved_data["temperature"] = temperature;
    ctx->saved_data["compute"] = static_cast<std::int64_t>(dt.compute);
    ctx->saved_data["stats"] = static_cast<std::int64_t>(dt.stats);
    ctx->set_materialize_grads(false);  // an unused entropy costs nothing in backward
    return {logprobs, entropy};
  }

  // d loss / dz = g_lp (onehot - p) - g_H p (log p + H), then / temperature; written straight in the
  // compute dtype, which the two GEMMs read.
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& hidden = saved[0];
    const auto& weight = saved[1];
    const auto& targets = saved[2];
    const auto chunk_rows = ctx->saved_data["chunk_rows"].toInt();
    const bool with_entropy = ctx->saved_data["with_entropy"].toBool();
    const double temperature = ctx->saved_data["temperature"].toDouble();
    const Dtypes dt{static_cast<torch::ScalarType>(ctx->saved_data["compute"].toInt()),
                    static_cast<torch::ScalarType>(ctx->saved_data["stats"].toInt())};
    const auto n = hidden.size(0);
    const auto stats_options = hidden.options().dtype(dt.stats);
    const auto g_logprobs = grads[0].defined() ? grads[0].to(dt.stats) : torch::zeros({n}, stats_options);
    const auto g_entropy = with_entropy && grads[1].defined() ? grads[1].to(dt.stats) : torch::Tensor();

    const auto w = weight.to(dt.compute);
    auto grad_hidden = torch::zeros_like(hidden);
    auto grad_weight = torch::zeros(weight.sizes(), weight.options().dtype(dt.stats));
    for (std::int64_t start = 0; start < n; start += chunk_rows) {
      const auto rows = std::min(chunk_rows, n - start);
      const auto h = hidden.narrow(0, start, rows).to(dt.compute);
      const auto g_lp = g_logprobs.narrow(0, start, rows).unsqueeze(1) / temperature;
      auto g_z = torch::empty({rows, weight.size(0)}, hidden.options().dtype(dt.compute));
      if (!g_entropy.defined()) {
        at::mul_out(g_z, chunk_softmax(h, w, dt, temperature), -g_lp);
      } else {
        const auto logp = chunk_log_softmax(h, w, dt, temperature);
        const auto p = logp.exp();
        const auto g_h = g_entropy.narrow(0, start, rows).unsqueeze(1) / temperature;
        const auto entropy = -row_dot(p, logp);
        at::mul_out(g_z, p, at::addcmul(-(g_lp + g_h * entropy), -g_h, logp));
      }
      g_z.scatter_add_(1, targets.narrow(0, start, rows).unsqueeze(1), g_lp.to(dt.compute));
      grad_hidden.narrow(0, start, rows).copy_(at::mm(g_z, w));
      grad_weight.add_(at::mm(g_z.t(), h));
    }
    return {grad_hidden, grad_weight.to(weight.scalar_type()), torch::Tensor(), torch::Tensor(), torch::Tensor(),
            torch::Tensor()};
  }
};

}  // namespace

std::pair<torch::Tensor, torch::Tensor> linear_logprobs(const torch::Tensor& hidden, const torch::Tensor& weight,
                                                        const torch::Tensor& targets,
                                                        const LinearLogprobsOptions& options) {
  TORCH_CHECK(hidden.dim() == 2 && weight.dim() == 2 && hidden.size(1) == weight.size(1),
              "linear_logprobs: hidden [N, D] and weight [V, D] expected, got ", hidden.sizes(), " and ",
              weight.sizes());
  TORCH_CHECK(targets.dim() == 1 && targets.size(0) == hidden.size(0) && targets.scalar_type() == torch::kInt64,
              "linear_logprobs: targets must be int64 [", hidden.size(0), "], got ", targets.sizes());
  TORCH_CHECK(options.chunk_rows > 0, "linear_logprobs: chunk_rows must be positive, got ", options.chunk_rows);
  TORCH_CHECK(options.temperature > 0, "linear_logprobs: temperature must be positive, got ", options.temperature);
  auto outputs = LinearLogprobsFn::apply(hidden, weight, targets, options.chunk_rows, options.with_entropy,
                                         options.temperature);
  return {outputs[0], options.with_entropy ? outputs[1] : torch::Tensor()};
}

}  // namespace kernelrl::model
