// Native and host builds: write the source into a private scratch folder under the cache, run nvcc
// or the C++ compiler there, record the result beside the artifact, and rename the folder into
// the cache. Both link with -z defs, so a call to a function nobody defines (a typo, or cuBLAS /
// torch declared by hand) is a compile error naming the symbol, not a load failure later.
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "common/fs.hpp"
#include "common/hash.hpp"
#include "compile/build.hpp"
#include "compile/cache.hpp"
#include "compile/host_pch.hpp"
#include "compile/nvcc_steps.hpp"
#include "compile/import_check.hpp"
#include "compile/system_call_check.hpp"
#include "kernelrl/build_config.hpp"

namespace kernelrl::compile::detail {

namespace {

namespace fs = std::filesystem;
using common::Format;
using common::Status;

constexpr std::uint64_t kMaxOutputFileBytes = 256ull << 20;  // RLIMIT_FSIZE of the compiler

// Native candidates build in two steps, measured fastest on the H200 machine (bench/nvcc_variants.sh):
// nvcc compiles to an object (device code optimised by default; host code is only launch code, so
// no host -O; --threads 2 runs the host and device front ends side by side), then the C++
// compiler links the shared library (gold when present), skipping nvcc's device-link steps that a
// whole-program build does not need. The shim folder drops C++17's special math functions from
// <cmath> (see shims/bits/specfun.h). libcuda is linked as-needed so driver-API calls
// (cuTensorMapEncodeTiled) resolve under -z defs without adding a dependency to kernels that make none.
// nvcc's host compiler is tools/host-cc (gcc, with the headers of its last step precompiled and
// cached under the cache folder's host-pch/), unless options.host_pch is off.
bool uses_host_pch(const Toolchain& tc, const CompileOptions& options) {
  return options.host_pch && !tc.host_cc_wrapper.empty();
}

std::vector<std::string> native_compile_command(const Toolchain& tc, const CompileOptions& options, const fs::path& src,
                                                const fs::path& object) {
  const std::string& arch = options.cuda_arch;
  std::vector<std::string> argv{tc.nvcc,
                                "-c",
                                "-Xcompiler",
                                "-fPIC",
                                "-gencode",
                                "arch=compute_" + arch + ",code=sm_" + arch,
                                "-std=c++17",
                                "--threads",
                                "2",
                                "-I" + tc.abi_include_dir.string(),
                                "-I" + std::string(build::compile_shim_dir),
                                "-o",
                                object.string(),
                                src.string()};
  argv.insert(argv.end() - 3, std::begin(kNvtxOffDefines), std::end(kNvtxOffDefines));
  if (uses_host_pch(tc, options)) {  // host compile against cached headers (compile/host_pch.hpp)
    argv.insert(argv.begin() + 1, {"-ccbin", tc.host_cc_wrapper});
  }
  argv.insert(argv.end(), options.extra_flags.begin(), options.extra_flags.end());
  return argv;
}

std::vector<std::string> native_link_command(const Toolchain& tc, const fs::path& object, const fs::path& out,
                                             bool fast_linker) {
  const fs::path lib = fs::path(tc.nvcc).parent_path().parent_path() / "lib64";
  std::vector<std::string> argv{tc.cuda_host_cxx, "-shared"};
  if (fast_linker && !tc.fast_linker.empty()) argv.push_back(tc.fast_linker);
  const std::vector<std::string> rest{"-o",        out.string(),  object.string(),  "-L" + lib.string(),
                                      "-L" + (lib / "stubs").string(), "-lcudart", "-Wl,-z,defs", "-Wl,--as-needed",
                                      "-lcuda"};
  argv.insert(argv.end(), rest.begin(), rest.end());
  return argv;
}

std::vector<std::string> host_command(const Toolchain& tc, const CompileOptions& options, const fs::path& src,
                                      const fs::path& out) {
  std::vector<std::string> argv{tc.cxx,     "-std=c++17", "-O2", "-march=native", "-shared", "-fPIC",
                                "-I" + tc.abi_include_dir.string(), "-Wl,-z,defs", "-o", out.string(), src.string()};
  argv.insert(argv.end(), options.extra_flags.begin(), options.extra_flags.end());
  return argv;
}

CompileResult infrastructure_failure(const std::string& message) {
  CompileResult r;
  r.status = Status::COMPILE_ERROR;
  r.message = message;
  r.log_excerpt = message;
  return r;
}

}  // namespace

CompileResult build_library(const BuildRequest& req) {
  const auto start = std::chrono::steady_clock::now();
  const bool native = req.options.format == Format::NATIVE;
  const Toolchain& tc = req.toolchain;
  if (native && tc.nvcc.empty()) {
    return infrastructure_failure(
        "nvcc not found: native candidates need the CUDA toolkit (set $KERNELRL_NVCC or put nvcc on PATH)");
  }
  const std::string& program = native ? tc.nvcc : tc.cxx;
  if (::access(program.c_str(), X_OK) != 0) {
    return infrastructure_failure(std::string(native ? "nvcc" : "C++ compiler") + " '" + program +
                                  "' is not an executable file (check $KERNELRL_NVCC / $CXX)");
  }
  if (tc.confine.empty()) {  // the compilers read only the toolchain and the candidate's folder: never unconfined
    return infrastructure_failure("kernelrl-confine not found (" + std::string(build::confine_tool) +
                                  "): build the project's tools/confine");
  }
  if (native && dotted_arch(req.options.cuda_arch).empty()) {
    return infrastructure_failure("invalid cuda_arch '" + req.options.cuda_arch + "': expected digits such as 90 or 100a");
  }
  auto scratch = common::make_temp_dir(req.cache_dir / "tmp", "build-");
  if (!scratch) return infrastructure_failure("cannot create a build folder: " + scratch.error().message);

  const fs::path src = *scratch / source_file_name(req.options.format);
  const fs::path out = *scratch / artifact_file_name(req.options.format);
  if (auto s = common::write_file_atomic(src, req.source); !s) {
    (void)common::remove_tree(*scratch);
    return infrastructure_failure("cannot write the source: " + s.error().message);
  }
  common::RunLimits limits;
  limits.wall_time = req.options.time_limit;
  limits.address_space_bytes = req.options.memory_limit_bytes;
  limits.file_size_bytes = kMaxOutputFileBytes;
  limits.nice = kCompilerNice;
  // TMPDIR: nvcc's intermediate files go into the scratch folder and vanish with it, even when the
  // compiler is killed. LC_ALL=C: plain ASCII quotes in gcc's messages.
  std::vector<std::string> env{"TMPDIR=" + scratch->string(), "LC_ALL=C"};
  // Every step runs confined (tools/confine): it reads only the toolchain, the headers and this
  // scratch folder (a file-reading directive the static scan missed finds nothing else), and writes
  // only there (and the shared precompiled headers).
  std::vector<std::string> writable{scratch->string(), "/dev/null"};
  if (native && uses_host_pch(tc, req.options)) {
    const fs::path pch_dir = req.cache_dir / "host-pch";
    std::error_code ec;
    fs::create_directories(pch_dir, ec);  // a root must exist to be allowed
    env.push_back(std::string(host_pch::kRealCompilerEnv) + "=" + tc.cuda_host_cc);
    env.push_back(std::string(host_pch::kPchDirEnv) + "=" + pch_dir.string());
    writable.push_back(pch_dir.string());
  }
  auto confine = [&](const std::vector<std::string>& command) {
    return with_env(env, confined(tc, req.options, false, writable, command));
  };
  const fs::path object = *scratch / "candidate.o";
  std::vector<std::string> argv = native ? native_compile_command(tc, req.options, src, object) : host_command(tc, req.options, src, out);
  std::string pipeline_note;
  if (native && req.options.parallel_nvcc) {  // nvcc's own steps, its two front ends side by side
    const std::string module_id = "_" + common::hash_hex(req.source).substr(0, 8) + "_" +
                                  std::to_string(src.filename().string().size()) + "_candidate_cu_" +
                                  common::hash_hex(scratch->string()).substr(0, 8);
    if (auto script = nvcc_steps::script_for(argv, env, *scratch, module_id)) {
      argv = {"/bin/sh", "-c", *script};
    } else {
      pipeline_note = "nvcc ran as is: " + script.error().message;
    }
  }
  auto run = common::run_process(confine(argv), *scratch, {}, limits);
  if (native && run && run->ok()) {  // the link gets what is left of the time limit
    const auto spent = std::chrono::milliseconds(static_cast<long>(ms_since(start)));
    limits.wall_time = std::max(std::chrono::milliseconds(1000), limits.wall_time - spent);
    auto link = common::run_process(confine(native_link_command(tc, object, out, true)), *scratch, {}, limits);
    if (link && !link->ok() && !link->timed_out && !tc.fast_linker.empty()) {
      // Some toolchains' gold cannot read their libstdc++ (seen on the GPU machine): the default linker.
      link = common::run_process(confine(native_link_command(tc, object, out, false)), *scratch, {}, limits);
    }
    if (link) link->output = run->output + link->output;
    run = std::move(link);
  }
  if (run) run->output = clean_paths(run->output, src, *scratch, req.display_name);

  BuildOutcome outcome = interpret_run(run, native ? "nvcc" : "the C++ compiler", req.options, req.display_name);
  CompileResult& result = outcome.result;
  result.pipeline_note = pipeline_note;
  std::error_code ec;
  if (result.status == Status::OK && !fs::is_regular_file(out, ec)) {
    result.status = Status::COMPILE_ERROR;
    result.message = "the compiler reported success but wrote no " + out.filename().string();
  }
  if (result.status == Status::OK) {
    // What the library imports decides whether it may ever be loaded (compile/import_check.hpp).
    auto imports = imported_symbols(out);
    std::optional<std::string> refused =
        imports ? forbidden_import(*imports, native, req.options.system_access_check)
                : std::optional<std::string>("cannot read the built library: " + imports.error().message);
    if (!refused && req.options.system_access_check) {  // the same calls by its own instructions
      auto own_calls = raw_system_call(out);
      refused = own_calls ? *own_calls
                          : std::optional<std::string>("cannot check the built library: " + own_calls.error().message);
    }
    if (refused) {
      result.status = Status::REJECTED;
      result.message = *refused;
      result.log_excerpt = *refused;
      ::unlink(out.c_str());  // a rejected library never sits in the cache
    }
  }
  if (result.status == Status::OK) result.artifact = out;
  result.t_compile_ms = ms_since(start);
  if (!outcome.cacheable) {
    (void)common::remove_tree(*scratch);
    result.artifact.clear();
    return result;
  }
  std::string full_log = run ? run->output : std::string();
  if (auto s = write_entry_files(*scratch, req.key_text, result, req.display_name, full_log); !s) {
    return result;  // served from the scratch folder this once; the cache just misses next time
  }
  return publish(req.cache_dir, *scratch, req.entry, req.key_text, req.display_name, !req.options.use_cache,
                 std::move(result));
}

}  // namespace kernelrl::compile::detail
