// The candidate's own kernels: the mangled names of the __global__ functions its shared libraries
// define, read from the files (their `.nv_fatbin` sections, loaded by the driver and unloaded
// again) before any of the candidate's code runs, so nothing it does at load or call time can add
// a name. Also the few CUDA driver functions the launch audit calls, taken from libcuda.so.1 at run
// time rather than linked: the audit's binaries then load, and its CPU tests run, on machines
// without an NVIDIA driver.
#pragma once

#include <cuda.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::audit {

// Entry points of the CUDA driver (CUDA 12.4 or newer: cuFuncGetName, cuKernelGetName,
// cuLibraryEnumerateKernels). Pointers to libcuda's exported functions, so calls through them go
// through the driver's API entry exactly as the candidate's own calls do.
struct CudaDriver {
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDriverGetVersion) driver_get_version = nullptr;
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuFuncGetName) func_get_name = nullptr;
  decltype(&::cuKernelGetName) kernel_get_name = nullptr;
  decltype(&::cuStreamIsCapturing) stream_is_capturing = nullptr;
  decltype(&::cuLibraryLoadData) library_load_data = nullptr;
  decltype(&::cuLibraryUnload) library_unload = nullptr;
  decltype(&::cuLibraryGetKernelCount) library_get_kernel_count = nullptr;
  decltype(&::cuLibraryEnumerateKernels) library_enumerate_kernels = nullptr;

  // "CUDA_ERROR_INVALID_VALUE (1)": the result's name and number, for error messages.
  std::string describe(CUresult result) const;
};

// The process's driver entry points, resolved once (thread-safe; the table lives until exit). An
// Error says what is missing: libcuda.so.1 (no NVIDIA driver on this machine) or a function (a
// driver older than CUDA 12.4). It does not call cuInit.
common::Expected<const CudaDriver*> cuda_driver();

// The bytes of the `.nv_fatbin` section of the ELF file `library` (where nvcc puts the device code
// of a host binary); an empty string when it has no such section (a library without device code).
// Read with compile::read_elf, as the compile checks read the same library. An Error names the file
// when it cannot be read, is not a 64-bit ELF file or has a section header or section out of its
// bounds. CPU only.
common::Expected<std::string> read_fatbin_section(const std::filesystem::path& library);

// The fatbin containers in a `.nv_fatbin` section, in order: one per translation unit with device
// code, each 8-byte aligned, zero bytes between them. Views into `section`. An Error names the
// offset of bytes that are neither padding nor a whole container. CPU only.
common::Expected<std::vector<std::string_view>> split_fatbins(std::string_view section);

// The mangled names of the kernels defined in `libraries`' device code, sorted, each once. Each
// fatbin container is loaded with cuLibraryLoadData (the driver inflates compressed ones and picks
// the image for the current device), its kernels enumerated and named, and unloaded; none of the
// libraries' host code runs and none of their kernels is launched. A library without a
// `.nv_fatbin` section adds nothing. Needs the driver initialised (cuInit) with a context for the
// device current on this thread (the runner's primary context): a container with no image for
// this device fails. An Error names the library, the container and the driver's result.
common::Expected<std::vector<std::string>> own_kernel_names(const std::vector<std::filesystem::path>& libraries);

}  // namespace kernelrl::audit
