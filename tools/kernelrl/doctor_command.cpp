#include "doctor_command.hpp"

#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"
#include "common/provenance.hpp"
#include "common/subprocess.hpp"
#include "common/table.hpp"
#include "compile/compiler.hpp"
#include "kernelrl/build_config.hpp"

namespace kernelrl::cli {

namespace fs = std::filesystem;

namespace {

// The BLAS library this process loaded (libtorch's libblas.so.3), resolved through Debian's
// alternatives symlinks; empty when none is loaded.
std::string loaded_blas() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (name.find("libblas") != std::string::npos || name.find("openblas") != std::string::npos ||
            name.find("libmkl") != std::string::npos) {
          std::error_code ec;
          auto real = fs::canonical(name, ec);
          *static_cast<std::string*>(out) = ec ? name : real.string();
          return 1;
        }
        return 0;
      },
      &found);
  return found;
}

std::string describe_blas(const std::string& path) {
  if (path.empty()) return "none loaded (libtorch's own kernels, or MKL linked statically)";
  if (path.find("openblas") != std::string::npos) return "OpenBLAS: " + path;
  if (path.find("mkl") != std::string::npos) return "MKL: " + path;
  if (path.find("/blas/libblas") != std::string::npos) {
    return "reference BLAS (slow matmuls on the CPU; scripts/setup.sh installs OpenBLAS): " + path;
  }
  return path;
}

// Python's version, torch's, and whether torch's C++ extension headers (kernelbench builds) exist,
// asked of the interpreter kernelrl embeds.
struct PythonFacts {
  std::string python, torch;
  bool extension_headers = false;
  std::string error;
};

PythonFacts python_facts() {
  PythonFacts f;
  // Tagged lines: torch may print notes of its own on the same output.
  const std::string script =
      "import os, sys, torch, torch.utils.cpp_extension as c\n"
      "print('doctor.python', sys.version.split()[0]); print('doctor.torch', torch.__version__)\n"
      "print('doctor.headers', any(os.path.isfile(os.path.join(p, 'torch', 'extension.h')) for p in c.include_paths()))\n";
  common::RunLimits limits;
  limits.wall_time = std::chrono::milliseconds(60000);
  auto r = common::run_process({build::python_executable, "-c", script}, {}, {}, limits);
  if (!r || !r->ok()) {
    f.error = std::string(build::python_executable) + " cannot import torch: " + (r ? r->output : r.error().message);
    return f;
  }
  std::istringstream lines(r->output);
  for (std::string line; std::getline(lines, line);) {
    auto value = [&](const std::string& tag) { return line.rfind(tag + " ", 0) == 0 ? line.substr(tag.size() + 1) : ""; };
    if (auto v = value("doctor.python"); !v.empty()) f.python = v;
    if (auto v = value("doctor.torch"); !v.empty()) f.torch = v;
    if (value("doctor.headers") == "True") f.extension_headers = true;
  }
  return f;
}

std::string present(const fs::path& p) {
  std::error_code ec;
  return p.string() + (fs::exists(p, ec) ? "" : " (not there yet)");
}

}  // namespace

CLI::App* add_doctor_command(CLI::App& app, DoctorArgs& args) {
  auto* cmd = app.add_subcommand("doctor", "what this machine can do: GPU, compilers, torch, BLAS, formats, caches");
  cmd->add_flag("--json", args.json, "print one JSON object");
  return cmd;
}

int run_doctor(const DoctorArgs& args, const std::function<common::Expected<std::unique_ptr<eval::Engine>>()>& make_engine) {
  nlohmann::json report;
  std::vector<std::pair<std::string, std::string>> rows;
  auto add = [&](const std::string& key, const std::string& value) {
    rows.emplace_back(key, value);
    report[key] = value;
  };
  add("kernelrl", std::string(build::version) + ", commit " + common::project_commit() + ", " + build::source_dir);
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_bytes = ::sysconf(_SC_PAGE_SIZE);
  add("cpu", std::to_string(std::thread::hardware_concurrency()) + " cores, " +
                 std::to_string(static_cast<long long>(pages) * page_bytes >> 30) + " GiB memory");

  const PythonFacts py = python_facts();
  add("python", py.error.empty() ? std::string(build::python_executable) + " " + py.python : py.error);
  add("torch", py.error.empty() ? py.torch : "-");
  add("blas", describe_blas(loaded_blas()));

  auto toolchain = compile::detect_toolchain();
  const bool has_cxx = toolchain && !toolchain->cxx.empty();
  const bool has_nvcc = toolchain && !toolchain->nvcc.empty() && !toolchain->nvcc_version.empty();
  add("c++", has_cxx ? toolchain->cxx + " (" + toolchain->cxx_version + ")"
                     : "not found" + (toolchain ? std::string() : ": " + toolchain.error().message));
  add("nvcc", has_nvcc ? toolchain->nvcc + " " + toolchain->nvcc_version : "not found (native candidates cannot compile)");
  add("host-cc", toolchain && !toolchain->host_cc_wrapper.empty()
                     ? toolchain->host_cc_wrapper
                     : std::string("not built: ninja -C build kernelrl_host_cc (native compiles then skip its headers)"));
  const bool has_confine = toolchain && !toolchain->confine.empty();
  add("confine", has_confine ? toolchain->confine
                             : std::string("not built: ninja -C build kernelrl_confine (candidate builds refuse to run)"));

  auto engine = make_engine();
  std::string device = "-";
  bool gpu = false;
  if (!engine) {
    add("gpu", "unknown: the engine could not start: " + engine.error().message);
  } else {
    device = (*engine)->device();
    const auto& info = (*engine)->device_info();
    gpu = device == "cuda";
    add("gpu", gpu ? info.value("name", std::string("?")) + ", compute capability " +
                         info.value("compute_capability", std::string("?")) + ", driver " +
                         info.value("driver_version", std::string("?"))
                   : std::string("none (torch sees no usable GPU): candidates run on the CPU"));
    add("engine device", device + ", " + std::to_string((*engine)->n_workers()) + " worker(s)");
  }

  const bool ran = static_cast<bool>(engine);
  auto verdict = [](bool ok, const std::string& why_not) { return ok ? std::string("yes") : "no: " + why_not; };
  add("format native", verdict(ran && gpu && has_nvcc && has_confine,
                               !gpu ? "no GPU" : (!has_nvcc ? "no nvcc" : (!has_confine ? "tools/confine not built" : "the engine did not start"))));
  add("format host", verdict(ran && has_cxx && has_confine,
                             !has_cxx ? "no C++ compiler" : (!has_confine ? "tools/confine not built" : "the engine did not start")));
  const bool kb_ok = ran && has_confine && py.extension_headers && (device == "cpu" || has_nvcc);
  add("format kernelbench",
      kb_ok ? "yes, on " + device + " (load_inline with torch headers: minutes per cold compile)"
            : "no: " + std::string(!has_confine                ? "tools/confine not built"
                                   : !py.extension_headers    ? "torch's C++ extension headers are missing"
                                   : !ran                     ? "the engine did not start"
                                                              : "no nvcc for CUDA extensions"));

  const fs::path cache = common::cache_root();
  add("compile cache", present(cache / "compile") + (std::getenv("KERNELRL_CACHE_DIR") ? "" : " (KERNELRL_CACHE_DIR moves it)"));
  add("sized tasks", present(cache / "tasks"));
  add("default model", present(fs::path(build::source_dir) / ".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf"));

  if (args.json) {
    std::cout << report.dump(2) << "\n";
  } else {
    common::Table table({"check", "this machine"});
    for (const auto& [k, v] : rows) table.add_row({k, v});
    std::cout << table.render();
  }
  return ran ? 0 : 2;
}

}  // namespace kernelrl::cli
