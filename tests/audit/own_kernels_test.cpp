// The CPU side of the launch audit: finding a library's device code (.nv_fatbin) before it loads,
// splitting it into fatbin containers, the record's JSON, and what happens without a CUDA driver.
// The libraries are built by nvcc and the host compiler at build time (tests/audit/CMakeLists.txt).
#include "audit/own_kernels.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "audit/launch_audit.hpp"

namespace kernelrl::audit {
namespace {

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50u;

std::uint32_t first_word(std::string_view bytes) {
  std::uint32_t word = 0;
  std::memcpy(&word, bytes.data(), sizeof word);
  return word;
}

TEST(FatbinSection, NvccLibraryHoldsItsDeviceCode) {
  auto section = read_fatbin_section(AUDIT_KERNELS_SHARED);
  ASSERT_TRUE(section.ok()) << section.error().message;
  ASSERT_GE(section->size(), 16u) << "no .nv_fatbin section in " << AUDIT_KERNELS_SHARED;
  EXPECT_EQ(first_word(*section), kFatbinMagic);
}

TEST(FatbinSection, EachTranslationUnitIsAContainer) {
  for (const char* library : {AUDIT_KERNELS_SHARED, AUDIT_KERNELS_STATIC}) {
    auto section = read_fatbin_section(library);
    ASSERT_TRUE(section.ok()) << section.error().message;
    auto containers = split_fatbins(*section);
    ASSERT_TRUE(containers.ok()) << library << ": " << containers.error().message;
    // Two .cu files with kernels; the static runtime may add containers of its own.
    EXPECT_GE(containers->size(), 2u) << library;
    std::size_t total = 0;
    for (const auto& c : *containers) {
      ASSERT_GE(c.size(), 16u);
      EXPECT_EQ(first_word(c), kFatbinMagic);
      total += c.size();
    }
    EXPECT_LE(total, section->size());
  }
}

TEST(FatbinSection, HostOnlyLibraryHasNone) {
  auto section = read_fatbin_section(AUDIT_PLAIN_LIBRARY);
  ASSERT_TRUE(section.ok()) << section.error().message;
  EXPECT_TRUE(section->empty()) << section->size() << " bytes of .nv_fatbin in " << AUDIT_PLAIN_LIBRARY;
  auto containers = split_fatbins(*section);
  ASSERT_TRUE(containers.ok());
  EXPECT_TRUE(containers->empty());
}

TEST(FatbinSection, NotAnElfFileIsAnErrorNamingIt) {
  const auto path = std::filesystem::temp_directory_path() / ("audit_not_elf_" + std::to_string(::getpid()));
  std::ofstream(path) << "not a library";
  auto section = read_fatbin_section(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(section.ok());
  EXPECT_NE(section.error().message.find(path.string()), std::string::npos) << section.error().message;

  auto missing = read_fatbin_section("/nonexistent/libcandidate.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/libcandidate.so"), std::string::npos);
}

TEST(FatbinSection, SplitRefusesBytesThatAreNotContainers) {
  EXPECT_FALSE(split_fatbins(std::string(32, 'x')).ok());
  // A header whose size runs past the section.
  std::string truncated(16, '\0');
  const std::uint32_t magic = kFatbinMagic;
  const std::uint16_t header_bytes = 16;
  const std::uint64_t body_bytes = 1000;
  std::memcpy(truncated.data(), &magic, 4);
  std::memcpy(truncated.data() + 6, &header_bytes, 2);
  std::memcpy(truncated.data() + 8, &body_bytes, 8);
  auto split = split_fatbins(truncated);
  ASSERT_FALSE(split.ok());
  EXPECT_NE(split.error().message.find("offset 0"), std::string::npos) << split.error().message;
  // Padding alone is no container and no error.
  auto padding = split_fatbins(std::string(24, '\0'));
  ASSERT_TRUE(padding.ok());
  EXPECT_TRUE(padding->empty());
}

TEST(LaunchAuditWithoutDriver, InstallAndOwnNamesSayTheDriverIsMissing) {
  if (cuda_driver().ok()) GTEST_SKIP() << "a CUDA driver is present: audit_launch_audit_gpu_test covers it";
  auto names = own_kernel_names({AUDIT_KERNELS_SHARED});
  ASSERT_FALSE(names.ok());
  EXPECT_NE(names.error().message.find("libcuda.so.1"), std::string::npos) << names.error().message;
  LaunchAudit audit;
  auto installed = audit.install({"_Z12scale_kernelPffi"});
  ASSERT_FALSE(installed.ok());
  EXPECT_NE(installed.error().message.find("libcuda.so.1"), std::string::npos) << installed.error().message;
}

TEST(CallLaunchesJson, NamesEveryCountAndTheVerdictInputs) {
  CallLaunches r;
  r.n_kernels = 5;
  r.n_own = 3;
  r.n_inside_allowed_ops = 1;
  r.n_foreign = 1;
  r.foreign_kernels = {"sm90_xmma_gemm_f32f32"};
  r.by_entry_point = {{"cuLaunchKernel", 5}};
  const auto j = to_json(r);
  EXPECT_EQ(j.at("n_kernels"), 5);
  EXPECT_EQ(j.at("n_own"), 3);
  EXPECT_EQ(j.at("n_inside_allowed_ops"), 1);
  EXPECT_EQ(j.at("n_foreign"), 1);
  EXPECT_EQ(j.at("foreign_kernels").at(0), "sm90_xmma_gemm_f32f32");
  EXPECT_EQ(j.at("by_entry_point").at("cuLaunchKernel"), 5);
  EXPECT_EQ(j.at("audit_intact"), true);
  for (const char* key : {"n_graph_kernels", "n_graph_launches", "n_other_stream_launches", "n_foreign_between_calls",
                          "n_foreign_since_install"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_FALSE(r.only_own_or_allowed());
  r.n_foreign = 0;
  EXPECT_TRUE(r.only_own_or_allowed());
  r.n_foreign_between_calls = 2;
  EXPECT_FALSE(r.only_own_or_allowed());
  r.n_foreign_between_calls = 0;
  r.audit_intact = false;
  EXPECT_FALSE(r.only_own_or_allowed());
}

}  // namespace
}  // namespace kernelrl::audit
