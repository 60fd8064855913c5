// The policy model as a rollout Policy, in process: rollout threads call generate() at once; a
// batching thread gathers their prompts (up to max_batch, waiting at most batch_wait_ms for more
// once one arrives) and samples them together with the KV-cached sampler. Responses carry the
// sampled token ids, which the trainer trains on, and their log-probabilities under the
// distribution sampled from (temperature and top-p applied), which it compares its own with.
#pragma once

#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

#include "model/sampler.hpp"
#include "policy/policy.hpp"
#include "policy/policy_model.hpp"

namespace kernelrl::policy {

struct LocalPolicyConfig {
  model::SamplingParams sampling;  // temperature 0.9, top-p, max_new_tokens; stops are added (end of turn, eos)
  int max_batch = 256;             // prompts sampled together at most
  double batch_wait_ms = 20;       // after the first prompt arrives, wait this long for others
};

class LocalPolicy final : public Policy {
 public:
  // `policy` is shared, not owned, and must not be trained while a rollout samples from it.
  LocalPolicy(PolicyModel& policy, LocalPolicyConfig config);
  ~LocalPolicy() override;
  LocalPolicy(const LocalPolicy&) = delete;
  LocalPolicy& operator=(const LocalPolicy&) = delete;

  // Thread-safe; blocks until the batch holding this prompt is sampled. An Error: a prompt longer
  // than the model's context leaves for the response, or the sampler failed (naming why).
  common::Expected<PolicyResponse> generate(const std::vector<common::Message>& messages) override;

  nlohmann::json describe() const override;  // {"kind": "local", "model": path, sampling settings}

  // The model's context less max_new_tokens, counted in the prompt ids generate() would sample from.
  std::optional<TokenBudget> token_budget() const override;

  int n_batches() const;  // sampler calls so far (how well prompts were batched)

  // Restarts the sampling seed sequence (a training step's samples then do not depend on how many
  // batches earlier steps took, so a resumed run samples as the uninterrupted one would).
  void reseed(std::uint64_t seed);

 private:
  struct Request {
    std::vector<std::int64_t> prompt;
    std::promise<common::Expected<PolicyResponse>> done;
  };
  void serve();
  void sample_batch(std::vector<Request>& batch, const model::SamplingParams& params);

  PolicyModel& policy_;
  LocalPolicyConfig config_;
  model::SamplingParams sampling_;  // config_.sampling plus the model's stops
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Request> queue_;
  bool stopping_ = false;
  int n_batches_ = 0;
  std::uint64_t n_sampled_ = 0;  // seeds each batch differently
  std::thread server_;
};

}  // namespace kernelrl::policy
