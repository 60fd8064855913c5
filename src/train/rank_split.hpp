// How a data-parallel step is divided among its ranks, without any communication: which GRPO
// groups (tasks) a rank rolls out, and where each of its samples stands in the step's whole batch,
// so that the update's seeded minibatch split (update.cpp) is the one a single process would make
// and each rank takes, for every global minibatch, its own part of it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::train {

struct RankInfo {
  int rank = 0;        // 0 .. world_size - 1; rank 0 serves the rendezvous store
  int world_size = 1;  // number of ranks (processes)
};

// Items [begin, end) of a rank's contiguous share.
struct Share {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t size() const { return end - begin; }
};

// Rank `info.rank`'s share of n items: the shares are contiguous, in rank order, cover every item
// exactly once, and their sizes differ by at most one (the first n % world_size ranks get one more).
// Requires 0 <= rank < world_size (checked by the caller; connect() checks it).
Share rank_share(std::size_t n, RankInfo info);

// What orders a step's samples before the seeded minibatch split (trainer.cpp): a turn's task file,
// trajectory and turn.
struct SampleKey {
  std::string task;
  int trajectory = 0;
  int turn = 1;
  bool operator<(const SampleKey& other) const;
};

// Where a rank's samples stand in the step's whole batch.
struct GlobalPlacement {
  std::size_t n_samples = 0;          // samples of all ranks together
  std::vector<std::size_t> position;  // position[i]: this rank's sample i in the whole batch's order
};

// Places rank `rank`'s samples among all ranks' (`keys_by_rank[r]`: rank r's sample keys, each list
// already in key order): the whole batch is ordered by key as one process would order it, ties (the
// same task twice in a step) by rank. One rank: position i is i.
GlobalPlacement place_samples(const std::vector<std::vector<SampleKey>>& keys_by_rank, int rank);

// Text forms of a rank's keys for the exchange between ranks (a JSON array of [task, trajectory,
// turn]); reading fails, naming what it got, on text that is not such an array.
std::string keys_to_text(const std::vector<SampleKey>& keys);
common::Expected<std::vector<SampleKey>> keys_from_text(const std::string& text);

}  // namespace kernelrl::train
