// Preallocated key/value cache for incremental decoding: per layer K and V of shape
// [batch, n_kv_heads, capacity, head_dim], filled left to right. All rows share the write slot, so
// a left-padded batch keeps its padding in the first slots; a key mask records which filled slots
// hold real tokens. For inference (no autograd through the cache).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "weights/model_config.hpp"

namespace kernelrl::model {

class KvCache {
 public:
  // Allocates the cache of every layer of `config` (zeros), on the device and dtype of `options`.
  KvCache(const weights::ModelConfig& config, std::int64_t batch, std::int64_t capacity,
          torch::TensorOptions options);

  std::int64_t batch() const { return batch_; }
  std::int64_t capacity() const { return capacity_; }
  std::int64_t length() const { return length_; }  // filled slots, the same for every row
  bool has_padding() const { return has_padding_; }  // some filled slot may be padding
  torch::Tensor lengths() const;                     // [B] int64: real tokens cached per row
  torch::Tensor key_mask() const;                    // [B, length (+ pending)] bool: real-token slots
  void reset();                                      // empties the cache, keeps the memory

  // The transformer's protocol for one forward of `n_new` tokens: begin() reserves the slots and
  // records their mask (attention_mask [B, length + n_new] or [B, n_new]; undefined: all real);
  // store() writes one layer's k, v ([B, n_new, n_kv_heads, head_dim]) and returns all of that
  // layer's filled slots ([B, n_kv_heads, length + n_new, head_dim] views); commit() ends the step.
  // Throws c10::Error when the cache would overflow or shapes disagree (programmer errors).
  void begin(std::int64_t n_new, const torch::Tensor& attention_mask);
  std::pair<torch::Tensor, torch::Tensor> store(std::int64_t layer, const torch::Tensor& k, const torch::Tensor& v);
  // store() for a kernel that writes the step's keys/values itself (rope_and_store): the layer's
  // whole buffers [B, n_kv_heads, capacity, head_dim], where the step's one new token goes
  // (write_slot(): the slot tensor in a slot step, else length()), and afterwards what store()
  // would have returned.
  std::pair<torch::Tensor, torch::Tensor> buffers(std::int64_t layer) const;
  std::int64_t write_slot() const { return length_; }
  std::pair<torch::Tensor, torch::Tensor> stored(std::int64_t layer) const;
  void commit();
  void rollback();  // forgets an uncommitted step (the forward failed); the cache stays usable
  std::int64_t pending() const { return pending_; }

  // A one-token step whose shapes never change, so it can be captured in a CUDA graph and
  // replayed: `slot` ([1] int64 on the cache's device) says where the new keys/values go; store()
  // returns every layer's whole capacity and key_mask() the whole [B, capacity] mask (slots not yet
  // written are false, so attention ignores them). The new token counts as real in every row. A
  // slot step does not advance length(): the caller keeps the position (the device tensor is read
  // when the step runs, so a replay writes wherever `slot` points then).
  void begin_at(const torch::Tensor& slot);
  bool in_slot_step() const { return slot_.defined(); }
  const torch::Tensor& slot() const { return slot_; }  // the slot step's [1] slot tensor

 private:
  std::int64_t batch_, capacity_;
  std::int64_t length_ = 0, pending_ = 0;
  bool has_padding_ = false;
  std::vector<torch::Tensor> keys_, values_;  // per layer [B, n_kv_heads, capacity, head_dim]
  torch::Tensor key_mask_;                    // [B, capacity] bool
  torch::Tensor slot_;                        // [1] int64 during a slot step, else undefined
};

}  // namespace kernelrl::model
