// The one result record of an evaluation (JSON on the wire and on disk). Units are in the names.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.hpp"

namespace kernelrl::eval {

// Median and spread of repeated timings, in microseconds.
struct TimingSummary {
  int n = 0;
  double median_us = 0;
  double mean_us = 0;
  double min_us = 0;
  double max_us = 0;
  double stdev_us = 0;
  double p10_us = 0;
  double p90_us = 0;
};

// Why a candidate is not correct, in words and numbers a model can act on.
struct ErrorDetails {
  std::string message;                     // one line: the first thing that went wrong
  std::string compile_log;                 // first compiler errors with line numbers
  std::string stderr_tail;                 // last lines the candidate's process wrote
  int output_index = -1;                   // which output (or input, for "input modified") is wrong
  std::int64_t n_mismatch = 0;             // elements outside tolerance
  std::int64_t n_checked = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  std::vector<std::int64_t> first_bad_index;  // multi-dimensional index of the first mismatch
  int trial = -1;                          // correctness trial where it happened
};

inline constexpr double kUnstableCpuWaitFraction = 0.1;

struct EvalResult {
  common::Status status = common::Status::RUNTIME_ERROR;
  bool correct = false;
  double runtime_us = 0;      // median of the candidate's timed calls
  double ref_runtime_us = 0;  // median of the eager reference, timed the same way in the same run
  double speedup = 0;         // ref_runtime_us / runtime_us when correct and timed, else 0
  double sol_us = 0;          // speed of light of the task on this GPU (eval/speed_of_light.hpp); 0 unknown
  double sol_fraction = 0;    // sol_us / runtime_us when correct and timed
  TimingSummary runtime;
  TimingSummary ref_runtime;
  // CPU timings: the share of the timed calls' time (the candidate's or the reference's, whichever
  // is larger) that the threads doing them spent waiting for a CPU the machine's other work held;
  // -1 when not measured (GPU timings, untimed evaluations). Over kUnstableCpuWaitFraction the
  // timing is marked unstable: its runtimes and speedup describe the machine's load more than the
  // code (a spin-wait that loses its core turns into scheduler quanta).
  double cpu_wait_fraction = -1;
  bool timing_unstable = false;
  ErrorDetails error;
  std::map<std::string, double> phases_ms;  // compile, setup, load, correctness, timing, ref_timing, total;
                                            // steps inside a phase as "phase.step"
  std::string task;
  std::string candidate;
  std::string format;
  std::string rules;                        // the rule set that judged it: "strict" or "kernelbench"
  std::vector<std::string> warnings;        // kernelbench rules: what KernelBench's static checker would
                                            // flag without refusing (compile/kernelbench_warnings.hpp);
                                            // in the JSON only when there are some
  bool cache_hit = false;
  std::string device;                       // "cuda" or "cpu"
  nlohmann::json device_info;               // name, compute capability, driver, ...
  nlohmann::json versions;                  // torch, python, cuda runtime, nvcc, c++ compiler
  std::vector<std::uint64_t> seeds;         // init seed first, then one per correctness trial
  nlohmann::json tolerance;                 // atol/rtol per output dtype actually used
  nlohmann::json isolation;                 // which defenses were active around the candidate
  std::string commit;
  std::string timestamp;                    // ISO 8601, UTC
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TimingSummary, n, median_us, mean_us, min_us, max_us, stdev_us, p10_us,
                                                p90_us)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ErrorDetails, message, compile_log, stderr_tail, output_index,
                                                n_mismatch, n_checked, max_abs_error, max_rel_error, first_bad_index,
                                                trial)

void to_json(nlohmann::json& j, const EvalResult& r);
void from_json(const nlohmann::json& j, EvalResult& r);

// A result for a candidate that never ran (format, compile or infrastructure outcome).
EvalResult make_result(common::Status status, std::string message);

}  // namespace kernelrl::eval
