// A batch spread over several engines, one per GPU of a host (`kernelrl eval --batch --gpus`).
// Jobs are handed out one at a time, in batch order, to whichever engine has a thread free, so a
// GPU held up by slow jobs (hangs, cold kernelbench builds) takes fewer of them. Each engine keeps
// its own workers, device lock and reference timings (its GPU's); the compile cache folder is shared.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "common/expected.hpp"
#include "eval/engine.hpp"

namespace kernelrl::eval {

// Called once per job, in completion order, from the calling thread: the job's index, the index of
// the engine that evaluated it, and its result.
using SpreadDone = std::function<void(std::size_t job, std::size_t engine, const common::Expected<EvalResult>&)>;

// Evaluates `jobs` on `engines` (at least one); returns the results in job order. One engine: its
// own evaluate_batch (compiles every job ahead). Several: 2 x n_workers threads per engine each
// take the next job and evaluate it there (half compiling while the other half run).
std::vector<common::Expected<EvalResult>> evaluate_spread(const std::vector<Engine*>& engines,
                                                          const std::vector<EvalJob>& jobs, const SpreadDone& on_done = {});

}  // namespace kernelrl::eval
