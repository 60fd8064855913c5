// Shared by the compile tests: a fixture with a fresh cache folder and the detected toolchain, and
// small candidate sources.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "common/fs.hpp"
#include "compile/compiler.hpp"

namespace kernelrl::compile::testing {

// A host candidate that compiles; `salt` makes distinct sources (distinct cache keys).
inline std::string host_candidate(int salt = 0) {
  return "#include <kernelrl/abi.h>\n"
         "#include <cstring>\n"
         "static const int kSalt = " + std::to_string(salt) + ";\n"
         "extern \"C\" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,\n"
         "                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {\n"
         "  (void)params; (void)n_params; (void)stream; (void)n_inputs; (void)n_outputs;\n"
         "  std::memcpy(outputs[0].data, inputs[0].data, sizeof(float) * kernelrl_numel(&inputs[0]));\n"
         "  return kSalt * 0;\n"
         "}\n";
}

// Sets an environment variable for its lifetime, then restores the previous value.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~scoped_env() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class compile_fixture : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = common::make_temp_dir(std::filesystem::temp_directory_path(), "kernelrl-compile-test-");
    ASSERT_TRUE(dir.ok()) << dir.error().message;
    cache_dir_ = *dir;
    auto tc = detect_toolchain();
    ASSERT_TRUE(tc.ok()) << tc.error().message;
    toolchain_ = *tc;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(cache_dir_, ec);
  }

  Compiler compiler() const { return Compiler(toolchain_, cache_dir_); }

  static CompileOptions host_options() {
    CompileOptions o;
    o.format = common::Format::HOST;
    o.time_limit = std::chrono::milliseconds(30000);
    return o;
  }

  std::filesystem::path cache_dir_;
  Toolchain toolchain_;
};

}  // namespace kernelrl::compile::testing
