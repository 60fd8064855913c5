// Data-parallel training on the CPU: the shares of a step's samples, and two ranks (two processes
// of this test binary, re-executed with KERNELRL_DP_RANK set, meeting over loopback through gloo)
// whose summed gradients and AdamW step equal one process's that did all the samples, and whose
// sums, maxima and exchanged texts are those of both.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <torch/torch.h>

#include "common/subprocess.hpp"
#include "train/data_parallel.hpp"
#include "train/launcher.hpp"

namespace kernelrl::train {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kSamples = 8;
constexpr std::size_t kLateFrom = 6;  // samples from here on also use `extra`: only rank 1's share has them

// Two linear layers, a parameter only some samples use, and one no sample uses. Same weights on
// every call (and so on every rank).
struct Tiny {
  torch::nn::Linear first{nullptr}, second{nullptr};
  torch::Tensor extra, unused;
  std::vector<torch::Tensor> parameters() const {
    return {first->weight, first->bias, second->weight, second->bias, extra, unused};
  }
};

Tiny make_tiny() {
  torch::manual_seed(7);
  Tiny t;
  t.first = torch::nn::Linear(4, 6);
  t.second = torch::nn::Linear(6, 2);
  t.extra = torch::randn({2}).requires_grad_();
  t.unused = torch::randn({3}).requires_grad_();
  return t;
}

struct Data {
  torch::Tensor inputs, targets;
};

Data make_data() {
  torch::manual_seed(13);
  return {torch::randn({static_cast<long>(kSamples), 4}), torch::randn({static_cast<long>(kSamples), 2})};
}

// The loss of samples [begin, end), normalised by the GLOBAL sample count.
torch::Tensor share_loss(Tiny& t, const Data& d, Share share) {
  auto b = static_cast<long>(share.begin), e = static_cast<long>(share.end);
  auto pred = t.second->forward(torch::tanh(t.first->forward(d.inputs.slice(0, b, e))));
  auto loss = (pred - d.targets.slice(0, b, e)).pow(2).sum();
  const auto late = share.end > kLateFrom ? share.end - std::max(share.begin, kLateFrom) : 0;
  if (late > 0) loss = loss + t.extra.pow(2).sum() * static_cast<double>(late);
  return loss / static_cast<double>(kSamples);
}

// A step's gradients (an empty tensor where a parameter has none) and the parameters after AdamW.
struct StepResult {
  std::vector<torch::Tensor> grads, params;
};

StepResult step(Tiny& t, Share share, GradientAllReduce& reduce) {
  auto params = t.parameters();
  torch::optim::AdamW adamw(params, torch::optim::AdamWOptions(1e-2).weight_decay(0.1));
  adamw.zero_grad();
  share_loss(t, make_data(), share).backward();
  auto summed = reduce.sum_gradients(params);
  EXPECT_TRUE(summed) << summed.error().message;
  StepResult r;
  for (auto& p : params) r.grads.push_back(p.grad().defined() ? p.grad().clone() : torch::empty({0}));
  adamw.step();
  for (auto& p : params) r.params.push_back(p.detach().clone());
  return r;
}

std::vector<torch::Tensor> flatten(const StepResult& r) {
  auto all = r.grads;
  all.insert(all.end(), r.params.begin(), r.params.end());
  return all;
}

void expect_close(const std::vector<torch::Tensor>& got, const std::vector<torch::Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].sizes(), want[i].sizes()) << what << " tensor " << i;
    EXPECT_TRUE(torch::allclose(got[i], want[i], 1e-6, 1e-6))
        << what << " tensor " << i << ": max difference " << (got[i] - want[i]).abs().max().item<double>();
  }
}

const char* env(const char* name) { return std::getenv(name); }

// Starts this binary as one rank (DataParallelRank.OneRank); wall_ms bounds it.
common::RunResult run_rank(int rank, int world, int port, int timeout_ms, const fs::path& out) {
  const auto self = fs::read_symlink("/proc/self/exe").string();
  common::RunLimits limits;
  limits.wall_time = std::chrono::milliseconds(120000);
  auto r = common::run_process({self, "--gtest_filter=DataParallelRank.OneRank"}, {},
                               {"KERNELRL_DP_RANK=" + std::to_string(rank), "KERNELRL_DP_WORLD=" + std::to_string(world),
                                "KERNELRL_DP_PORT=" + std::to_string(port),
                                "KERNELRL_DP_TIMEOUT_MS=" + std::to_string(timeout_ms), "KERNELRL_DP_OUT=" + out.string(),
                                "OMP_NUM_THREADS=1"},
                               limits);
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : common::RunResult{};
}

// One rank, when started by run_rank; skipped otherwise.
TEST(DataParallelRank, OneRank) {
  if (!env("KERNELRL_DP_RANK")) GTEST_SKIP() << "runs only as a rank started by the DataParallel tests";
  RankInfo info{std::atoi(env("KERNELRL_DP_RANK")), std::atoi(env("KERNELRL_DP_WORLD"))};
  GradientAllReduce reduce;
  const auto started = std::chrono::steady_clock::now();
  auto joined = reduce.connect(info, "127.0.0.1", std::atoi(env("KERNELRL_DP_PORT")),
                               std::chrono::milliseconds(std::atoi(env("KERNELRL_DP_TIMEOUT_MS"))));
  const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(joined) << joined.error().message << " (after " << ms << " ms)";
  auto t = make_tiny();
  auto r = step(t, rank_share(kSamples, info), reduce);
  torch::save(flatten(r), env("KERNELRL_DP_OUT"));
  // The trainer's other exchanges (rank_group.hpp): sums and maxima of numbers, texts in rank order.
  std::vector<double> sums = {1.0 + info.rank, 0.25 * info.rank}, maxima = {-1.0 * info.rank, 2.0 + info.rank};
  ASSERT_TRUE(reduce.sum_values(sums));
  ASSERT_TRUE(reduce.max_values(maxima));
  EXPECT_EQ(sums, (std::vector<double>{3.0, 0.25}));
  EXPECT_EQ(maxima, (std::vector<double>{0.0, 3.0}));
  for (int round = 0; round < 2; ++round) {
    auto texts = reduce.all_gather("rank " + std::to_string(info.rank) + " round " + std::to_string(round));
    ASSERT_TRUE(texts) << texts.error().message;
    EXPECT_EQ(*texts, (std::vector<std::string>{"rank 0 round " + std::to_string(round), "rank 1 round " + std::to_string(round)}));
  }
  auto done = reduce.barrier();  // neither rank tears the group down while the other still sums
  ASSERT_TRUE(done) << done.error().message;
}

TEST(DataParallel, SharesPartitionTheItems) {
  for (std::size_t n : {0, 1, 2, 5, 8, 17, 100}) {
    for (int world : {1, 2, 3, 4, 7, 8, 16}) {
      std::size_t next = 0, smallest = n, largest = 0;
      for (int rank = 0; rank < world; ++rank) {
        auto s = rank_share(n, {rank, world});
        EXPECT_EQ(s.begin, next) << "n=" << n << " world=" << world << " rank=" << rank;
        EXPECT_LE(s.begin, s.end);
        next = s.end;
        smallest = std::min(smallest, s.size());
        largest = std::max(largest, s.size());
      }
      EXPECT_EQ(next, n) << "n=" << n << " world=" << world;
      EXPECT_LE(largest - smallest, 1u) << "n=" << n << " world=" << world;
    }
  }
  EXPECT_EQ(rank_share(8, {0, 2}).end, 4u);  // the two-rank test below relies on it
}

TEST(DataParallel, WorldSizeOneIsANoOp) {
  GradientAllReduce reduce;
  auto joined = reduce.connect({0, 1}, "127.0.0.1", 0, std::chrono::milliseconds(1000));
  ASSERT_TRUE(joined) << joined.error().message;
  EXPECT_TRUE(reduce.connected());
  auto t = make_tiny();
  share_loss(t, make_data(), {0, kSamples}).backward();
  std::vector<torch::Tensor> before;
  for (auto& p : t.parameters()) before.push_back(p.grad().defined() ? p.grad().clone() : torch::empty({0}));
  ASSERT_TRUE(reduce.sum_gradients(t.parameters()));
  ASSERT_TRUE(reduce.barrier());
  auto params = t.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (before[i].numel() == 0) {
      EXPECT_FALSE(params[i].grad().defined()) << i;
    } else {
      EXPECT_TRUE(torch::equal(params[i].grad(), before[i])) << i;
    }
  }
  // Not connected at all: the same.
  GradientAllReduce fresh;
  EXPECT_TRUE(fresh.sum_gradients(params));
}

TEST(DataParallel, TheNcclBackendIsNotBuilt) {
  EXPECT_TRUE(check_backend(Backend::GLOO));
  auto nccl = check_backend(Backend::NCCL);
  ASSERT_FALSE(nccl);
  EXPECT_NE(nccl.error().message.find("NCCL backend"), std::string::npos) << nccl.error().message;
  GradientAllReduce reduce;
  EXPECT_FALSE(reduce.connect({0, 2}, "127.0.0.1", 1, std::chrono::milliseconds(100), Backend::NCCL));
}

TEST(DataParallel, ConnectRejectsABadRank) {
  GradientAllReduce reduce;
  EXPECT_FALSE(reduce.connect({2, 2}, "127.0.0.1", 1, std::chrono::milliseconds(100)));
  EXPECT_FALSE(reduce.connect({0, 0}, "127.0.0.1", 1, std::chrono::milliseconds(100)));
  EXPECT_FALSE(reduce.connect({0, 2}, "127.0.0.1", 0, std::chrono::milliseconds(100)));
  EXPECT_FALSE(GradientAllReduce{}.connect({-1, 2}, "127.0.0.1", 1, std::chrono::milliseconds(100)));
}

TEST(DataParallel, TwoRanksMatchOneProcessDoingAllSamples) {
  const auto dir = fs::temp_directory_path() / ("kernelrl_dp_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const int port = free_loopback_port();
  ASSERT_GT(port, 0);
  common::RunResult ranks[2];
  std::thread other([&] { ranks[1] = run_rank(1, 2, port, 30000, dir / "rank1.pt"); });
  ranks[0] = run_rank(0, 2, port, 30000, dir / "rank0.pt");
  other.join();
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(ranks[r].ok()) << "rank " << r << " exit " << ranks[r].exit_code << " signal " << ranks[r].term_signal
                               << (ranks[r].timed_out ? " (timed out)" : "") << ":\n"
                               << ranks[r].output;
  }
  std::vector<torch::Tensor> got[2];
  torch::load(got[0], (dir / "rank0.pt").string());
  torch::load(got[1], (dir / "rank1.pt").string());
  fs::remove_all(dir);

  auto t = make_tiny();
  GradientAllReduce alone;  // world size 1: the sum is the process's own gradients
  auto want = flatten(step(t, {0, kSamples}, alone));
  expect_close(got[0], want, "rank 0 against one process");
  expect_close(got[1], want, "rank 1 against one process");
  ASSERT_EQ(got[0].size(), got[1].size());
  for (std::size_t i = 0; i < got[0].size(); ++i) {
    EXPECT_TRUE(torch::equal(got[0][i], got[1][i])) << "the ranks differ in tensor " << i;
  }
  // The parameter only rank 1's samples use has the summed gradient on both; the unused one none.
  EXPECT_GT(want[4].abs().sum().item<double>(), 0.0);
  EXPECT_EQ(want[5].numel(), 0);
}

TEST(DataParallel, AMissingRankFailsWithinTheTimeout) {
  const auto dir = fs::temp_directory_path() / ("kernelrl_dp_missing_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // Rank 0 waits for a rank 1 that never comes; a rank 1 finds no rank 0 to connect to.
  for (int rank : {0, 1}) {
    const int port = free_loopback_port();
    const auto started = std::chrono::steady_clock::now();
    auto r = run_rank(rank, 2, port, 2000, dir / "unused.pt");
    const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    EXPECT_FALSE(r.timed_out) << "rank " << rank << " hung";
    EXPECT_EQ(r.term_signal, 0) << "rank " << rank << ":\n" << r.output;
    EXPECT_NE(r.exit_code, 0) << "rank " << rank << " joined a group of one:\n" << r.output;
    EXPECT_NE(r.output.find("could not join the group"), std::string::npos) << r.output;
    EXPECT_LT(seconds, 10.0) << "rank " << rank << " took " << seconds << " s with a 2 s timeout";
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelrl::train
