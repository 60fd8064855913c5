// `kernelrl doctor`: what this machine can do. The GPU torch sees (or none), nvcc, the C++
// compiler, Python and torch, the BLAS libtorch loaded, the runtime pieces the engine starts
// (tools/host-cc, tools/confine), which candidate formats can run here and where the caches and
// the default model live.
#pragma once

#include <functional>
#include <memory>

#include <CLI/CLI.hpp>

#include "eval/engine.hpp"

namespace kernelrl::cli {

struct DoctorArgs {
  bool json = false;
};

// Registers `doctor` on `app`; returns the subcommand.
CLI::App* add_doctor_command(CLI::App& app, DoctorArgs& args);

// Prints the report (a table, or one JSON object with --json). `make_engine` starts an engine on
// device "auto" to ask a worker what torch sees. Returns 0 when the engine started (at least host
// candidates can be evaluated), 2 when it could not (the report says why).
int run_doctor(const DoctorArgs& args, const std::function<common::Expected<std::unique_ptr<eval::Engine>>()>& make_engine);

}  // namespace kernelrl::cli
