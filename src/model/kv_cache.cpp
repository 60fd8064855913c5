// The key/value cache's bookkeeping: slot reservation, mask recording, per-layer writes.
#include "model/kv_cache.hpp"

namespace kernelrl::model {

KvCache::KvCache(const weights::ModelConfig& config, std::int64_t batch, std::int64_t capacity,
                 torch::TensorOptions options)
    : batch_(batch), capacity_(capacity) {
  TORCH_CHECK(batch > 0 && capacity > 0, "KvCache: batch and capacity must be positive, got ", batch, " and ",
              capacity);
  keys_.reserve(config.n_layers);
  values_.reserve(config.n_layers);
  for (std::int64_t i = 0; i < config.n_layers; ++i) {
    keys_.push_back(torch::zeros({batch, config.n_kv_heads, capacity, config.head_dim}, options));
    values_.push_back(torch::zeros({batch, config.n_kv_heads, capacity, config.head_dim}, options));
  }
  key_mask_ = torch::zeros({batch, capacity}, options.dtype(torch::kBool));
}

torch::Tensor KvCache::lengths() const { return key_mask_.narrow(1, 0, length_).sum(1); }

torch::Tensor KvCache::key_mask() const {
  return in_slot_step() ? key_mask_ : key_mask_.narrow(1, 0, length_ + pending_);
}

void KvCache::reset() {
  length_ = 0;
  pending_ = 0;
  slot_ = torch::Tensor();
  has_padding_ = false;
  key_mask_.fill_(false);
}

void KvCache::begin(std::int64_t n_new, const torch::Tensor& attention_mask) {
  TORCH_CHECK(pending_ == 0, "KvCache::begin: the previous step was not committed");
  TORCH_CHECK(length_ + n_new <= capacity_, "KvCache: ", length_, " cached + ", n_new,
              " new tokens exceed the capacity ", capacity_);
  auto slots = key_mask_.narrow(1, length_, n_new);
  if (attention_mask.defined()) {
    TORCH_CHECK(attention_mask.dim() == 2 && attention_mask.size(0) == batch_,
                "KvCache: attention_mask must be [batch, tokens], got ", attention_mask.sizes());
    auto mask = attention_mask.to(key_mask_.device(), torch::kBool);
    if (mask.size(1) == length_ + n_new) {
      mask = mask.narrow(1, length_, n_new);
    }
    TORCH_CHECK(mask.size(1) == n_new, "KvCache: attention_mask has ", attention_mask.size(1),
                " columns; expected ", n_new, " (new tokens) or ", length_ + n_new, " (all tokens)");
    slots.copy_(mask);
    has_padding_ = true;
  } else {
    slots.fill_(true);
  }
  pending_ = n_new;
}

void KvCache::begin_at(const torch::Tensor& slot) {
  TORCH_CHECK(pending_ == 0, "KvCache::begin_at: the previous step was not committed");
  TORCH_CHECK(slot.dim() == 1 && slot.size(0) == 1 && slot.scalar_type() == torch::kInt64 &&
                  slot.device() == key_mask_.device(),
              "KvCache::begin_at: slot must be a [1] int64 tensor on ", key_mask_.device(), ", got ",
              slot.scalar_type(), " ", slot.sizes(), " on ", slot.device());
  key_mask_.index_fill_(1, slot, true);
  slot_ = slot;
  pending_ = 1;
  has_padding_ = true;  // attention must read the mask from now on: unwritten slots are not keys
}

std::pair<torch::Tensor, torch::Tensor> KvCache::store(std::int64_t layer, const torch::Tensor& k,
                                                       const torch::Tensor& v) {
  TORCH_CHECK(layer >= 0 && layer < static_cast<std::int64_t>(keys_.size()), "KvCache: no layer ", layer);
  TORCH_CHECK(k.size(1) == pending_, "KvCache::store: got ", k.size(1), " tokens, begin() reserved ", pending_);
  if (in_slot_step()) {
    keys_[layer].index_copy_(2, slot_, k.transpose(1, 2).to(keys_[layer].scalar_type()));
    values_[layer].index_copy_(2, slot_, v.transpose(1, 2).to(values_[layer].scalar_type()));
  } else {
    keys_[layer].narrow(2, length_, pending_).copy_(k.transpose(1, 2));
    values_[layer].narrow(2, length_, pending_).copy_(v.transpose(1, 2));
  }
  return stored(layer);
}

std::pair<torch::Tensor, torch::Tensor> KvCache::buffers(std::int64_t layer) const {
  TORCH_CHECK(layer >= 0 && layer < static_cast<std::int64_t>(keys_.size()), "KvCache: no layer ", layer);
  return {keys_[layer], values_[layer]};
}

std::pair<torch::Tensor, torch::Tensor> KvCache::stored(std::int64_t layer) const {
  TORCH_CHECK(layer >= 0 && layer < static_cast<std::int64_t>(keys_.size()), "KvCache: no layer ", layer);
  if (in_slot_step()) return {keys_[layer], values_[layer]};
  return {keys_[layer].narrow(2, 0, length_ + pending_), values_[layer].narrow(2, 0, length_ + pending_)};
}

void KvCache::commit() {
  if (!in_slot_step()) length_ += pending_;
  pending_ = 0;
  slot_ = torch::Tensor();
}

void KvCache::rollback() {
  pending_ = 0;
  slot_ = torch::Tensor();
}

}  // namespace kernelrl::model
