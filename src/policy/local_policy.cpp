#include "policy/local_policy.hpp"

#include <chrono>

#include <torch/torch.h>

#include "common/crash_report.hpp"
#include "model/autocast.hpp"
#include "train/episodes.hpp"

namespace kernelrl::policy {

LocalPolicy::LocalPolicy(PolicyModel& policy, LocalPolicyConfig config)
    : policy_(policy), config_(std::move(config)), sampling_(config_.sampling) {
  const std::string& end = policy_.chat.end_of_turn();
  if (!end.empty()) sampling_.stop_strings.push_back(end);
  if (auto id = policy_.chat.end_of_turn_id(policy_.tokenizer)) sampling_.stop_token_ids.push_back(*id);
  if (policy_.tokenizer.eos_id() >= 0) sampling_.stop_token_ids.push_back(policy_.tokenizer.eos_id());
  server_ = std::thread([this] { serve(); });
}

LocalPolicy::~LocalPolicy() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  server_.join();
}

common::Expected<PolicyResponse> LocalPolicy::generate(const std::vector<common::Message>& messages) {
  Request request;
  request.prompt = policy_.prompt_ids(messages);
  const std::int64_t room = policy_.model->config().max_position - sampling_.max_new_tokens;
  if (static_cast<std::int64_t>(request.prompt.size()) > room) {  // the runner's token budget keeps prompts below
    return common::make_error("the prompt has " + std::to_string(request.prompt.size()) + " tokens; with " +
                              std::to_string(sampling_.max_new_tokens) + " new tokens it exceeds the model's context of " +
                              std::to_string(policy_.model->config().max_position));
  }
  auto result = request.done.get_future();
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(request));
  }
  wake_.notify_all();
  return result.get();
}

void LocalPolicy::serve() {
  common::CrashStack crash_stack;
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty() && stopping_) return;
    // Give the other rollout threads a moment to add their prompts to this batch.
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::microseconds(static_cast<long>(config_.batch_wait_ms * 1000));
    wake_.wait_until(lock, deadline, [&] { return stopping_ || static_cast<int>(queue_.size()) >= config_.max_batch; });
    std::vector<Request> batch;
    while (!queue_.empty() && static_cast<int>(batch.size()) < config_.max_batch) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    ++n_batches_;
    model::SamplingParams params = sampling_;
    params.seed = sampling_.seed + 1000003ull * n_sampled_++;
    lock.unlock();
    sample_batch(batch, params);
    lock.lock();
  }
}

void LocalPolicy::sample_batch(std::vector<Request>& batch, const model::SamplingParams& params) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::vector<std::int64_t>> prompts;
  for (const auto& r : batch) prompts.push_back(r.prompt);
  auto detokenize = [this](std::span<const std::int64_t> ids) {
    std::vector<std::int32_t> narrow(ids.begin(), ids.end());
    return policy_.tokenizer.decode(narrow, /*skip_special=*/false);
  };
  common::Expected<std::vector<model::Sample>> samples = common::make_error("not sampled");
  {
    std::optional<model::AutocastScope> autocast;
    if (policy_.bf16_autocast) autocast.emplace(policy_.device.type());
    samples = model::generate(policy_.model, prompts, params, detokenize);
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (!samples) {
      batch[i].done.set_value(common::make_error("sampling failed: " + samples.error().message));
      continue;
    }
    model::Sample& s = (*samples)[i];
    PolicyResponse r;
    r.content = s.text;
    const std::string& end = policy_.chat.end_of_turn();
    if (!end.empty() && r.content.ends_with(end)) {
      r.content.resize(r.content.size() - end.size());  // the end-of-turn marker is not part of the answer
    }
    r.finish_reason = s.finish_reason;
    r.token_ids = std::move(s.token_ids);
    r.logprobs = std::move(s.sampling_logprobs);  // the distribution sampled from, as the trainer's ratio uses
    r.latency_ms = ms;
    batch[i].done.set_value(std::move(r));
  }
}

nlohmann::json LocalPolicy::describe() const {
  return {{"kind", "local"},
          {"model", policy_.source.string()},
          {"temperature", config_.sampling.temperature},
          {"top_p", config_.sampling.top_p},
          {"max_new_tokens", config_.sampling.max_new_tokens}};
}

std::optional<TokenBudget> LocalPolicy::token_budget() const {
  const std::int64_t room = policy_.model->config().max_position - sampling_.max_new_tokens;
  return TokenBudget{static_cast<std::size_t>(std::max<std::int64_t>(room, 0)),
                              [this](const std::vector<common::Message>& messages) {
                                return policy_.prompt_ids(messages).size();
                              }};
}

void LocalPolicy::reseed(std::uint64_t seed) {
  std::lock_guard lock(mutex_);
  sampling_.seed = seed;
  n_sampled_ = 0;
}

int LocalPolicy::n_batches() const {
  std::lock_guard lock(mutex_);
  return n_batches_;
}

}  // namespace kernelrl::policy
