// Every format's candidate in a process of its own, from the evaluating child's side: the runner
// started ahead (eval/runner_process.hpp) is handed the evaluation (START), calibrated (idle calls
// timed like calls, before any candidate code is loaded) and then asked to load the candidate.
// Internal to src/eval.
#pragma once

#include <memory>

#include "eval/child_context.hpp"
#include "eval/runner_candidate.hpp"

namespace kernelrl::eval {

// The runner of `s`'s candidate, handed its evaluation and set up (its confinement report in
// obs.isolation["candidate_process"]); nullptr when the candidate runs in this process (the
// baselines, defenses off). Throws TaskError when it could not set itself up: no candidate code ran.
std::unique_ptr<RunnerCandidate> start_candidate_process(const ChildSetup& s, Observations& obs);

// What the clock costs around a call of `runner`'s, measured before its candidate is loaded: idle
// calls flushed, armed and timed as the timing phase times calls (obs.isolation["timed_apart"]).
void calibrate_idle_calls(const ChildSetup& s, RunnerCandidate& runner, Observations& obs);

// LOAD in the runner, then (native, host) the params into its shared memory: the Candidate, or why
// it could not be loaded.
LoadOutcome load_in_candidate_process(const ChildSetup& s, std::unique_ptr<RunnerCandidate> runner);

}  // namespace kernelrl::eval
