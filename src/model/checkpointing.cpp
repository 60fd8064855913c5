// Activation checkpointing of one decoder layer. libtorch has no torch.utils.checkpoint, so this is
// the reentrant variant as a custom autograd function: forward runs the layer without recording a
// graph and keeps only the layer's input; backward runs the layer again with grad (and with the
// autocast state of the forward) and differentiates that. Peak activation memory drops from all
// layers' intermediates to one layer's.
#include <optional>

#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/autograd.h>

#include "model/autocast.hpp"
#include "model/layers.hpp"

namespace kernelrl::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct LayerCheckpoint : public torch::autograd::Function<LayerCheckpoint> {
  // `params` are the layer's parameters, passed so autograd routes their gradients through here.
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, at::TensorList params,
                               DecoderLayerImpl* layer, const Rope* rope, const AttentionMask* mask) {
    (void)params;
    ctx->save_for_backward({x});
    // The layer outlives the backward pass (the model owns it); an IValue holds no raw pointer.
    ctx->saved_data["layer"] = static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(layer));
    ctx->saved_data["cos"] = rope->cos;
    ctx->saved_data["sin_signed"] = rope->sin_signed;
    ctx->saved_data["mask_kind"] = static_cast<std::int64_t>(mask->kind);
    if (mask->allowed.defined()) ctx->saved_data["allowed"] = mask->allowed;
    const auto device_type = x.device().type();
    ctx->saved_data["autocast"] = autocast_enabled(device_type);
    ctx->saved_data["autocast_dtype"] = static_cast<std::int64_t>(autocast_dtype(device_type));
    return layer->forward(x, *rope, *mask, nullptr, 0);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto x = ctx->get_saved_variables()[0];
    auto* layer = reinterpret_cast<DecoderLayerImpl*>(static_cast<std::intptr_t>(ctx->saved_data["layer"].toInt()));
    Rope rope{ctx->saved_data["cos"].toTensor(), ctx->saved_data["sin_signed"].toTensor()};
    AttentionMask mask;
    mask.kind = static_cast<MaskKind>(ctx->saved_data["mask_kind"].toInt());
    if (ctx->saved_data.count("allowed") != 0) mask.allowed = ctx->saved_data["allowed"].toTensor();

    auto x_in = x.detach().requires_grad_(true);
    torch::Tensor out;
    {
      torch::AutoGradMode grad_mode(true);
      std::optional<AutocastScope> autocast;
      if (ctx->saved_data["autocast"].toBool()) {
        autocast.emplace(x.device().type(), static_cast<c10::ScalarType>(ctx->saved_data["autocast_dtype"].toInt()));
      }
      out = layer->forward(x_in, rope, mask, nullptr, 0);
    }
    const auto params = layer->parameters();
    variable_list inputs{x_in};
    std::vector<std::size_t> param_slot;  // index in `inputs` of each parameter that needs a gradient
    for (const auto& p : params) {
      param_slot.push_back(p.requires_grad() ? inputs.size() : 0);
      if (p.requires_grad()) inputs.push_back(p);
    }
    auto grads = torch::autograd::grad({out}, inputs, {grad_outputs[0]}, /*retain_graph=*/false,
                                       /*create_graph=*/false, /*allow_unused=*/true);
    variable_list result{grads[0]};
    for (std::size_t i = 0; i < params.size(); ++i) {
      result.push_back(param_slot[i] == 0 ? torch::Tensor() : grads[param_slot[i]]);
    }
    result.resize(result.size() + 3);  // layer, rope, mask: not tensors
    return result;
  }
};

}  // namespace

torch::Tensor checkpointed_layer(DecoderLayerImpl& layer, const torch::Tensor& x, const Rope& rope,
                                 const AttentionMask& mask) {
  const auto params = layer.parameters();
  return LayerCheckpoint::apply(x, at::TensorList(params), &layer, &rope, &mask);
}

}  // namespace kernelrl::model
