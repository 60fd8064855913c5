// The compile cache on disk (see cache.hpp): key text, entry reading and writing, and publishing
// a finished build folder with one rename.
#include "compile/cache.hpp"

#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/fs.hpp"
#include "common/hash.hpp"
#include "compile/diagnostics.hpp"

namespace kernelrl::compile::detail {

namespace {

namespace fs = std::filesystem;
using common::Format;
using common::Status;
using json = nlohmann::json;

std::string quoted(const std::string& s) { return json(s).dump(); }

// Identity of this machine's CPU (model and feature flags): host candidates are built with
// -march=native, so a binary from another CPU must not be served.
const std::string& host_cpu_id() {
  static const std::string id = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(in, line) && (model.empty() || flags.empty())) {
      if (model.empty() && line.rfind("model name", 0) == 0) model = line;
      if (flags.empty() && line.rfind("flags", 0) == 0) flags = line;
    }
    return common::hash_hex(model + "\n" + flags);
  }();
  return id;
}

std::string abi_header_hash(const fs::path& include_dir) {
  auto text = common::read_file(include_dir / "kernelrl" / "abi.h", 1 << 20);
  return text ? common::hash_hex(*text) : std::string("missing");
}

}  // namespace

std::string make_key_text(const Toolchain& tc, const std::string& source, const CompileOptions& options) {
  const Format format = options.format;
  std::string k = std::string(kKeySchema) + "\n";
  k += "format: " + std::string(common::to_string(format)) + "\n";
  if (format != Format::HOST) k += "cuda_arch: " + quoted(options.cuda_arch) + "\n";
  if (format != Format::HOST) k += "nvcc: " + quoted(tc.nvcc) + " " + quoted(tc.nvcc_version) + "\n";
  k += "cxx: " + quoted(tc.cxx) + " " + quoted(tc.cxx_version) + "\n";
  if (format == Format::HOST) k += "host_cpu: " + host_cpu_id() + "\n";
  if (format == Format::KERNELBENCH) {
    std::error_code ec;
    fs::path real = fs::canonical(tc.python, ec);
    k += "python: " + quoted(tc.python) + " " + quoted(ec ? std::string() : real.string()) + "\n";
  } else {
    k += "abi_header: " + abi_header_hash(tc.abi_include_dir) + "\n";
  }
  k += "extra_flags: " + json(options.extra_flags).dump() + "\n";
  if (!options.system_access_check) k += "system_access_check: false\n";
  if (format != Format::HOST) k += "nvtx: off\n";  // build.hpp kNvtxOffDefines
  if (format == Format::KERNELBENCH) {
    // Bumped when the checks of a built extension change, so no verdict of the old ones is reused.
    k += "extension_checks: 2\n";
  }
  k += "source: " + std::to_string(source.size()) + " bytes\n";
  k += source;
  return k;
}

fs::path entry_dir(const fs::path& cache_dir, const std::string& key) {
  return cache_dir / key.substr(0, 2) / key;
}

std::string source_file_name(Format format) {
  switch (format) {
    case Format::NATIVE: return "candidate.cu";
    case Format::HOST: return "candidate.cpp";
    case Format::KERNELBENCH: return "candidate.py";
  }
  return "candidate";
}

std::string artifact_file_name(Format format) { return format == Format::KERNELBENCH ? "." : "candidate.so"; }

bool is_cacheable(Status status) {
  return status == Status::OK || status == Status::COMPILE_ERROR || status == Status::FORMAT_ERROR ||
         status == Status::REJECTED;
}

std::optional<CompileResult> read_entry(const fs::path& entry, const std::string& key_text,
                                        const std::string& display_name) {
  auto stored_key = common::read_file(entry / "key.txt", key_text.size());
  if (!stored_key || *stored_key != key_text) return std::nullopt;
  auto stored_result = common::read_file(entry / "result.json", 4 << 20);
  if (!stored_result) return std::nullopt;
  json j = json::parse(*stored_result, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  auto text_field = [&](const char* name) -> std::optional<std::string> {
    auto it = j.find(name);
    if (it == j.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  auto status_name = text_field("status");
  auto message = text_field("message");
  auto excerpt = text_field("log_excerpt");
  auto artifact = text_field("artifact");
  auto stored_name = text_field("display_name");
  if (!status_name || !message || !excerpt || !artifact || !stored_name) return std::nullopt;
  auto status = common::parse_status(*status_name);
  if (!status || !is_cacheable(*status)) return std::nullopt;

  CompileResult r;
  r.status = *status;
  if (!artifact->empty()) r.artifact = *artifact == "." ? entry : entry / *artifact;
  if (r.status == Status::OK) {
    std::error_code ec;
    bool present = *artifact == "." ? fs::is_directory(entry / "extensions", ec)
                                    : fs::is_regular_file(r.artifact, ec);
    if (!present) return std::nullopt;
  }
  r.message = *message;
  r.log_excerpt = *excerpt;
  if (!stored_name->empty() && *stored_name != display_name) {
    r.message = replace_all(r.message, *stored_name, display_name);
    r.log_excerpt = replace_all(r.log_excerpt, *stored_name, display_name);
  }
  return r;
}

common::Fallible write_entry_files(const fs::path& dir, const std::string& key_text, const CompileResult& result,
                                 const std::string& display_name, const std::string& full_log) {
  if (auto s = common::write_file_atomic(dir / "key.txt", key_text); !s) return s;
  if (auto s = common::write_file_atomic(dir / "compile.log", full_log); !s) return s;
  std::error_code ec;
  fs::path artifact = result.artifact.empty() ? fs::path() : fs::relative(result.artifact, dir, ec);
  json j = {
      {"status", std::string(common::to_string(result.status))},
      {"message", result.message},
      {"log_excerpt", result.log_excerpt},
      {"artifact", ec || artifact.empty() ? std::string() : artifact.string()},
      {"display_name", display_name},
      {"t_build_ms", result.t_compile_ms},
  };
  // Invalid UTF-8 cannot reach here (check_source rejects it, compilers print ASCII/UTF-8), but a
  // replacing dump keeps a stray byte from throwing.
  return common::write_file_atomic(dir / "result.json", j.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

CompileResult publish(const fs::path& cache_dir, const fs::path& scratch, const fs::path& entry,
                      const std::string& key_text, const std::string& display_name, bool replace,
                      CompileResult built) {
  std::error_code ec;
  fs::create_directories(entry.parent_path(), ec);
  fs::path artifact_rel = built.artifact.empty() ? fs::path() : fs::relative(built.artifact, scratch, ec);
  for (int attempt = 0; attempt < 3; ++attempt) {
    fs::rename(scratch, entry, ec);
    if (!ec) {
      if (!built.artifact.empty()) built.artifact = entry / artifact_rel;
      return built;
    }
    if (ec != std::errc::directory_not_empty && ec != std::errc::file_exists) break;
    if (!replace) {
      if (auto winner = read_entry(entry, key_text, display_name)) {
        (void)common::remove_tree(scratch);
        winner->t_compile_ms = built.t_compile_ms;
        return *winner;
      }
    }
    // The entry is stale, corrupt or to be replaced: move it aside (one rename, so readers see
    // either the old entry or none), then delete it at leisure.
    auto aside = common::make_temp_dir(cache_dir / "tmp", "old-");
    if (!aside) break;
    fs::rename(entry, *aside / "entry", ec);
    (void)common::remove_tree(*aside);
    replace = false;
  }
  return built;  // could not publish: the artifact stays in the scratch folder under tmp/
}

}  // namespace kernelrl::compile::detail
