// The ranks' exchanges through c10d: gradient and value sums over gloo, texts through the TCPStore.
#include "train/data_parallel.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <utility>

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace kernelrl::train {

using common::make_error;

std::string backend_name(Backend backend) { return backend == Backend::NCCL ? "nccl" : "gloo"; }

common::Fallible check_backend(Backend backend) {
  if (backend == Backend::GLOO) return common::Ok{};
  return make_error("data parallel: the NCCL backend (CUDA tensors) is not built yet: only gloo, which sums CPU "
                    "tensors (docs/train.md, \"Several GPUs\")");
}

// The seam where a CUDA backend (ProcessGroupNCCL) would sit beside gloo: sum_gradients picks the
// backend by the gradients' device; only the CPU's is built.
struct GradientAllReduce::Group {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> cpu;  // gloo: CPU tensors
  // c10::intrusive_ptr<c10d::ProcessGroupNCCL> cuda;  // not built yet
};

GradientAllReduce::GradientAllReduce() = default;
GradientAllReduce::~GradientAllReduce() = default;
GradientAllReduce::GradientAllReduce(GradientAllReduce&&) noexcept = default;
GradientAllReduce& GradientAllReduce::operator=(GradientAllReduce&&) noexcept = default;

bool GradientAllReduce::connected() const { return info_.world_size == 1 || group_ != nullptr; }

common::Fallible GradientAllReduce::connect(RankInfo info, const std::string& host, int port,
                                            std::chrono::milliseconds timeout, Backend backend) {
  if (auto s = check_backend(backend); !s) return s;
  if (info.world_size < 1 || info.rank < 0 || info.rank >= info.world_size) {
    return make_error("data parallel: rank " + std::to_string(info.rank) + " of world size " +
                      std::to_string(info.world_size) + " (expected 0 <= rank < world size)");
  }
  group_.reset();
  info_ = info;
  n_gathers_ = 0;
  if (info.world_size == 1) return common::Ok{};
  if (port <= 0 || port > 65535) return make_error("data parallel: port " + std::to_string(port) + " out of range");
  const std::string where = host + ":" + std::to_string(port);
  try {
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<std::uint16_t>(port);
    store_options.isServer = info.rank == 0;
    store_options.numWorkers = static_cast<std::size_t>(info.world_size);
    store_options.waitWorkers = false;  // the process group's rendezvous below waits for the ranks
    store_options.timeout = timeout;
    auto group = std::make_unique<Group>();
    group->store = c10::make_intrusive<c10d::TCPStore>(host, store_options);
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(host));
    options->threads = 2;
    group->cpu = c10::make_intrusive<c10d::ProcessGroupGloo>(group->store, info.rank, info.world_size, options);
    group_ = std::move(group);
  } catch (const c10::Error& e) {  // without the C++ backtrace c10 appends to what()
    return make_error("data parallel: rank " + std::to_string(info.rank) + " of " + std::to_string(info.world_size) +
                      " could not join the group at " + where + " within " + std::to_string(timeout.count()) +
                      " ms: " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    return make_error("data parallel: rank " + std::to_string(info.rank) + " of " + std::to_string(info.world_size) +
                      " could not join the group at " + where + " within " + std::to_string(timeout.count()) +
                      " ms: " + e.what());
  }
  return common::Ok{};
}

common::Fallible GradientAllReduce::sum_gradients(const std::vector<torch::Tensor>& parameters) {
  if (info_.world_size == 1) return common::Ok{};
  if (!group_) return make_error("data parallel: sum_gradients before connect");
  // One buffer per dtype, laid out by the parameters (identical on every rank), not by which
  // gradients this rank happens to have.
  std::map<c10::ScalarType, std::vector<std::size_t>> by_dtype;
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const auto& p = parameters[i];
    if (!p.defined()) return make_error("data parallel: parameter " + std::to_string(i) + " is undefined");
    const auto& g = p.grad();
    if (p.device().is_cuda() || (g.defined() && g.device().is_cuda())) {
      return make_error("data parallel: parameter " + std::to_string(i) +
                        " is on a CUDA device: the NCCL backend is not built yet (gloo sums CPU tensors)");
    }
    if (g.defined() && (g.scalar_type() != p.scalar_type() || g.numel() != p.numel())) {
      return make_error("data parallel: parameter " + std::to_string(i) + "'s gradient differs from it in dtype or size");
    }
    by_dtype[p.scalar_type()].push_back(i);
  }
  try {
    torch::NoGradGuard no_grad;
    for (auto& [dtype, indices] : by_dtype) {
      // The gradients, then one flag per parameter (1: this rank has its gradient), so that after
      // the sum a parameter no rank had a gradient for stays without one. The flags sum exactly in
      // every floating dtype up to 256 ranks (bfloat16's 8-bit significand).
      std::vector<torch::Tensor> flat;
      flat.reserve(indices.size() + 1);
      std::vector<double> has_grad;
      for (auto i : indices) {
        const auto& p = parameters[i];
        const auto& g = p.grad();
        flat.push_back(g.defined() ? g.reshape({-1}) : torch::zeros({p.numel()}, p.options()));
        has_grad.push_back(g.defined() ? 1.0 : 0.0);
      }
      flat.push_back(torch::tensor(has_grad, torch::TensorOptions().dtype(torch::kFloat64)).to(dtype));
      std::vector<torch::Tensor> buffer{torch::cat(flat)};
      auto work = group_->cpu->allreduce(buffer, c10d::AllreduceOptions{});  // ReduceOp::SUM
      work->wait();
      const auto flags = buffer[0].narrow(0, buffer[0].numel() - static_cast<std::int64_t>(indices.size()),
                                          static_cast<std::int64_t>(indices.size()));
      std::int64_t offset = 0;
      for (std::size_t k = 0; k < indices.size(); ++k) {
        auto p = parameters[indices[k]];  // a handle to the same tensor: setting its grad sets the caller's
        auto summed = buffer[0].narrow(0, offset, p.numel()).view(p.sizes());
        offset += p.numel();
        if (p.grad().defined()) {
          p.mutable_grad().copy_(summed);
        } else if (flags[static_cast<std::int64_t>(k)].item<double>() > 0.5) {
          p.mutable_grad() = summed.clone();
        }
      }
    }
  } catch (const c10::Error& e) {
    return make_error("data parallel: rank " + std::to_string(info_.rank) + ": summing gradients failed: " +
                      e.what_without_backtrace());
  } catch (const std::exception& e) {
    return make_error("data parallel: rank " + std::to_string(info_.rank) + ": summing gradients failed: " + e.what());
  }
  return common::Ok{};
}

namespace {

common::Fallible reduce_values(c10d::ProcessGroupGloo& group, std::vector<double>& values, c10d::ReduceOp op, int rank) {
  if (values.empty()) return common::Ok{};
  try {
    std::vector<torch::Tensor> buffer{torch::tensor(values, torch::TensorOptions().dtype(torch::kFloat64))};
    c10d::AllreduceOptions options;
    options.reduceOp = op;
    group.allreduce(buffer, options)->wait();
    const auto summed = buffer[0].contiguous();
    std::copy(summed.data_ptr<double>(), summed.data_ptr<double>() + summed.numel(), values.begin());
  } catch (const c10::Error& e) {
    return make_error("data parallel: rank " + std::to_string(rank) + ": reducing values failed: " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    return make_error("data parallel: rank " + std::to_string(rank) + ": reducing values failed: " + e.what());
  }
  return common::Ok{};
}

}  // namespace

common::Fallible GradientAllReduce::sum_values(std::vector<double>& values) {
  if (info_.world_size == 1) return common::Ok{};
  if (!group_) return make_error("data parallel: sum_values before connect");
  return reduce_values(*group_->cpu, values, c10d::ReduceOp::SUM, info_.rank);
}

common::Fallible GradientAllReduce::max_values(std::vector<double>& values) {
  if (info_.world_size == 1) return common::Ok{};
  if (!group_) return make_error("data parallel: max_values before connect");
  return reduce_values(*group_->cpu, values, c10d::ReduceOp::MAX, info_.rank);
}

common::Expected<std::vector<std::string>> GradientAllReduce::all_gather(const std::string& text) {
  if (info_.world_size == 1) return std::vector<std::string>{text};
  if (!group_) return make_error("data parallel: all_gather before connect");
  const std::string prefix = "kernelrl/gather/" + std::to_string(n_gathers_++) + "/";
  std::vector<std::string> out;
  try {
    group_->store->set(prefix + std::to_string(info_.rank), std::vector<std::uint8_t>(text.begin(), text.end()));
    for (int r = 0; r < info_.world_size; ++r) {
      const auto bytes = group_->store->get(prefix + std::to_string(r));  // waits for it, up to the timeout
      out.emplace_back(bytes.begin(), bytes.end());
    }
  } catch (const c10::Error& e) {
    return make_error("data parallel: rank " + std::to_string(info_.rank) + ": exchanging texts failed: " +
                      e.what_without_backtrace());
  } catch (const std::exception& e) {
    return make_error("data parallel: rank " + std::to_string(info_.rank) + ": exchanging texts failed: " + e.what());
  }
  return out;
}

common::Fallible GradientAllReduce::barrier() {
  if (info_.world_size == 1) return common::Ok{};
  if (!group_) return make_error("data parallel: barrier before connect");
  try {
    group_->cpu->barrier(c10d::BarrierOptions{})->wait();
  } catch (const c10::Error& e) {
    return make_error("data parallel: rank " + std::to_string(info_.rank) + ": barrier failed: " +
                      e.what_without_backtrace());
  } catch (const std::exception& e) {
    return make_error("data parallel: rank " + std::to_string(info_.rank) + ": barrier failed: " + e.what());
  }
  return common::Ok{};
}

}  // namespace kernelrl::train
