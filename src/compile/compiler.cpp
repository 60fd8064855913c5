// Compiler::compile: static checks, then the cache, then a build on a miss. A hit costs one hash
// of the source and two small file reads.
#include "compile/compiler.hpp"

#include <chrono>

#include "common/hash.hpp"
#include "compile/build.hpp"
#include "compile/cache.hpp"

namespace kernelrl::compile {

Compiler::Compiler(Toolchain toolchain, std::filesystem::path cache_dir)
    : toolchain_(std::move(toolchain)), cache_dir_(std::move(cache_dir)) {}

CompileResult Compiler::compile(const std::string& source, const std::string& display_name,
                                const CompileOptions& options) const {
  const auto start = std::chrono::steady_clock::now();
  auto finish = [&](CompileResult r) {
    r.t_compile_ms = detail::ms_since(start);
    return r;
  };
  const std::string key_text = detail::make_key_text(toolchain_, source, options);
  const std::string key = common::hash_hex(key_text);

  // Static rejections are not stored: they are recomputed faster than an entry could be read.
  CompileResult checked = check_source(source, options.format, display_name, kMaxSourceBytes, options.system_access_check,
                                        options.rules);
  if (checked.status != common::Status::OK) {
    checked.key = key;
    return finish(std::move(checked));
  }

  const std::filesystem::path entry = detail::entry_dir(cache_dir_, key);
  if (options.use_cache) {
    if (auto hit = detail::read_entry(entry, key_text, display_name)) {
      hit->key = key;
      hit->cache_hit = true;
      return finish(std::move(*hit));
    }
  }
  detail::BuildRequest request{toolchain_, cache_dir_, source, display_name, options, key_text, entry};
  CompileResult built = options.format == common::Format::KERNELBENCH ? detail::build_kernelbench(request)
                                                                       : detail::build_library(request);
  built.key = key;
  return finish(std::move(built));
}

}  // namespace kernelrl::compile
