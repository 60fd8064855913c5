// nvcc's steps for one native compile, run by kernelrl with its two front ends side by side.
// nvcc runs host preprocessing + cudafe++ and then device preprocessing + cicc + ptxas + fatbinary
// one after the other, although the only thing the device chain needs from the host one is the
// module id (a name cudafe++ writes and cicc reads, used for anonymous namespaces). Written by us
// before both start, the two chains run at once and the host compile follows, each step being
// nvcc's own command (from `nvcc --dryrun`) in nvcc's own order within its chain. Commands whose
// shape is not exactly that (several architectures, a device link, an unknown tool) are run by
// nvcc itself; the caller learns why.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::compile::nvcc_steps {

// nvcc's commands for one source and one GPU architecture, in shell syntax as --dryrun prints them.
struct Steps {
  std::vector<std::string> exports;  // "export NAME='value'" for the variables nvcc sets for its tools
  std::string host_preprocess;       // gcc -E (host)
  std::string cudafe;                // cudafe++, writing the module id unless told not to
  std::string device_preprocess;     // gcc -E -D__CUDA_ARCH__=...
  std::string cicc;
  std::string ptxas;
  std::string fatbinary;
  std::string host_compile;          // gcc -c of cudafe++'s output (includes cicc's stub and the fatbin)
  std::string module_id_file;        // the path both cudafe++ and cicc name
};

// Parses `nvcc --dryrun` output (its "#$ " lines). Fails, saying why, where the steps are not the
// shape above.
common::Expected<Steps> parse_dryrun(std::string_view dryrun_output);

// A /bin/sh script: exports, the module id written, the device chain in the background with its
// output held back, the host chain; if the host chain fails its output alone is shown (the device
// chain would repeat the same errors) and the script exits 1 once the device chain has ended (no
// step of it writes after the script); otherwise the device chain's output, and
// the host compile. Its temporary files are removed when it exits, however it ends.
std::string parallel_script(const Steps& steps, const std::string& module_id, const std::filesystem::path& work_dir);

// Runs `nvcc --dryrun` for `nvcc_argv` (argv[0] = nvcc) with `env` in `scratch` once per distinct
// command (the scratch folder abstracted away), then returns the script for this compile, or why
// nvcc must run as is. Thread-safe.
common::Expected<std::string> script_for(const std::vector<std::string>& nvcc_argv, const std::vector<std::string>& env,
                                         const std::filesystem::path& scratch, const std::string& module_id);

}  // namespace kernelrl::compile::nvcc_steps
