#include "audit/own_kernels.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "compile/elf_file.hpp"

namespace kernelrl::audit {
namespace {

// Magic number of a fatbin container's header (fatbinary.h's FATBIN_MAGIC, not shipped with the
// toolkit's public headers): u32 magic, u16 version, u16 header size, u64 size of what follows.
constexpr std::uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr std::size_t kFatbinHeaderBytes = 16;

template <typename F>
bool resolve(void* library, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(library, name));
  return out != nullptr;
}

common::Expected<CudaDriver> load_driver() {
  // RTLD_NOLOAD first: in the runner libcuda is already mapped (CUDA runtime, CUPTI), and no
  // second copy should ever be tried.
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (library == nullptr) library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return common::make_error(std::string("the CUDA driver (libcuda.so.1) cannot be loaded: ") +
                              (why != nullptr ? why : "no NVIDIA driver on this machine"));
  }
  CudaDriver d;
  const char* missing = nullptr;
  if (!resolve(library, "cuInit", d.init)) missing = "cuInit";
  if (!resolve(library, "cuDriverGetVersion", d.driver_get_version)) missing = "cuDriverGetVersion";
  if (!resolve(library, "cuGetErrorName", d.get_error_name)) missing = "cuGetErrorName";
  if (!resolve(library, "cuFuncGetName", d.func_get_name)) missing = "cuFuncGetName";
  if (!resolve(library, "cuKernelGetName", d.kernel_get_name)) missing = "cuKernelGetName";
  if (!resolve(library, "cuStreamIsCapturing", d.stream_is_capturing)) missing = "cuStreamIsCapturing";
  if (!resolve(library, "cuLibraryLoadData", d.library_load_data)) missing = "cuLibraryLoadData";
  if (!resolve(library, "cuLibraryUnload", d.library_unload)) missing = "cuLibraryUnload";
  if (!resolve(library, "cuLibraryGetKernelCount", d.library_get_kernel_count)) missing = "cuLibraryGetKernelCount";
  if (!resolve(library, "cuLibraryEnumerateKernels", d.library_enumerate_kernels)) {
    missing = "cuLibraryEnumerateKernels";
  }
  if (missing != nullptr) {
    return common::make_error(std::string("the CUDA driver (libcuda.so.1) has no ") + missing +
                              ": the launch audit needs a driver for CUDA 12.4 or newer");
  }
  return d;
}

}  // namespace

std::string CudaDriver::describe(CUresult result) const {
  const char* name = nullptr;
  if (get_error_name == nullptr || get_error_name(result, &name) != CUDA_SUCCESS || name == nullptr) {
    name = "unknown CUresult";
  }
  return std::string(name) + " (" + std::to_string(static_cast<int>(result)) + ")";
}

common::Expected<const CudaDriver*> cuda_driver() {
  // A function-local static: resolved once, thread-safe, never unloaded (callbacks may still call
  // through it while the process exits).
  static const common::Expected<CudaDriver> driver = load_driver();
  if (!driver) return driver.error();
  return &driver.value();
}

common::Expected<std::string> read_fatbin_section(const std::filesystem::path& library) {
  auto elf = compile::read_elf(library);
  if (!elf) return elf.error();
  for (const auto& section : elf->sections) {
    if (section.name == ".nv_fatbin") return std::string(elf->contents(section));
  }
  return std::string();
}

common::Expected<std::vector<std::string_view>> split_fatbins(std::string_view section) {
  std::vector<std::string_view> containers;
  std::size_t at = 0;
  while (at < section.size()) {
    if (section[at] == '\0') {  // the linker's padding up to the next 8-byte boundary
      ++at;
      continue;
    }
    if (at % 8 != 0 || section.size() - at < kFatbinHeaderBytes) {
      return common::make_error("bytes at offset " + std::to_string(at) +
                                " of the .nv_fatbin section are not a fatbin");
    }
    std::uint32_t magic = 0;
    std::uint16_t header_bytes = 0;
    std::uint64_t body_bytes = 0;
    std::memcpy(&magic, section.data() + at, sizeof magic);
    std::memcpy(&header_bytes, section.data() + at + 6, sizeof header_bytes);
    std::memcpy(&body_bytes, section.data() + at + 8, sizeof body_bytes);
    const std::size_t left = section.size() - at;
    if (magic != kFatbinMagic || header_bytes < kFatbinHeaderBytes || header_bytes > left ||
        body_bytes > left - header_bytes) {
      return common::make_error("bytes at offset " + std::to_string(at) +
                                " of the .nv_fatbin section are not a fatbin");
    }
    const std::size_t total = header_bytes + static_cast<std::size_t>(body_bytes);
    containers.push_back(section.substr(at, total));
    at += total;
  }
  return containers;
}

namespace {

// Appends the names of the kernels in one fatbin container, loaded and unloaded again.
common::Fallible add_container_kernels(const CudaDriver& d, std::string_view container, const std::string& where,
                                       std::vector<std::string>& names) {
  // The driver reads the container in place; a copy in 8-byte words keeps its header aligned
  // whatever the section's offset in the string was.
  std::vector<std::uint64_t> aligned((container.size() + 7) / 8, 0);
  std::memcpy(aligned.data(), container.data(), container.size());
  CUlibrary library = nullptr;
  CUresult r = d.library_load_data(&library, aligned.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (r != CUDA_SUCCESS) return common::make_error(where + "cuLibraryLoadData failed: " + d.describe(r));
  unsigned int n_kernels = 0;
  std::vector<CUkernel> kernels;
  r = d.library_get_kernel_count(&n_kernels, library);
  if (r == CUDA_SUCCESS && n_kernels > 0) {
    kernels.resize(n_kernels);
    r = d.library_enumerate_kernels(kernels.data(), n_kernels, library);
  }
  std::string failed_call = r == CUDA_SUCCESS ? "" : "cuLibraryGetKernelCount/cuLibraryEnumerateKernels";
  for (std::size_t i = 0; r == CUDA_SUCCESS && i < kernels.size(); ++i) {
    const char* name = nullptr;
    r = d.kernel_get_name(&name, kernels[i]);
    if (r != CUDA_SUCCESS) {
      failed_call = "cuKernelGetName";
    } else if (name != nullptr) {
      names.emplace_back(name);  // copied: the name lives only as long as the library
    }
  }
  const CUresult unloaded = d.library_unload(library);
  if (r != CUDA_SUCCESS) return common::make_error(where + failed_call + " failed: " + d.describe(r));
  if (unloaded != CUDA_SUCCESS) return common::make_error(where + "cuLibraryUnload failed: " + d.describe(unloaded));
  return common::Ok{};
}

}  // namespace

common::Expected<std::vector<std::string>> own_kernel_names(const std::vector<std::filesystem::path>& libraries) {
  auto driver = cuda_driver();
  if (!driver) return driver.error();
  const CudaDriver& d = **driver;
  if (const CUresult r = d.init(0); r != CUDA_SUCCESS) {
    return common::make_error("cuInit failed while reading the candidate's kernel names: " + d.describe(r));
  }
  std::vector<std::string> names;
  for (const auto& library : libraries) {
    auto section = read_fatbin_section(library);
    if (!section) return section.error();
    auto containers = split_fatbins(*section);
    if (!containers) return common::make_error(library.string() + ": " + containers.error().message);
    for (std::size_t i = 0; i < containers->size(); ++i) {
      const std::string where =
          library.string() + ": fatbin " + std::to_string(i + 1) + " of " + std::to_string(containers->size()) + ": ";
      if (auto added = add_container_kernels(d, (*containers)[i], where, names); !added) return added.error();
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace kernelrl::audit
