// tests/kernelbench_corpus on the CPU: the manifest's schema (every entry a valid batch entry with
// its kind, rule set, expected status and coverage tags; the files exist), the coverage the corpus
// promises (at least 30 honest GPU candidates, each style tag on two of them), and the static rules
// against every candidate under its rule set: honest ones pass them (a rule that refuses honest work
// fails here, before any GPU), and hacks the static rules are meant to catch are REJECTED. The GPU
// half is EngineGpuTest.KernelbenchCorpusIsClassifiedUnderItsRules.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"
#include "compile/compiler.hpp"
#include "eval/batch_file.hpp"

namespace kernelrl::eval {
namespace {

namespace fs = std::filesystem;

std::string source_path(const std::string& relative) { return std::string(KERNELRL_SOURCE_DIR) + "/" + relative; }

// The style tags an honest candidate may carry (tests/kernelbench_corpus/README.md).
const std::set<std::string> kTags{"current_stream", "torch_check",  "multi_kernel",        "templates",
                                  "at_dispatch",    "float4",       "shared_tiling",       "warp_shuffle",
                                  "half_bf16",      "cub",          "multi_cpp_functions", "extra_cuda_cflags",
                                  "module_constants", "nn_parameter", "cuda_inputs"};

struct Manifest {
  nlohmann::json raw;
  std::vector<BatchEntry> entries;
};

Manifest load(const std::string& relative) {
  Manifest m;
  auto text = common::read_file(source_path(relative));
  EXPECT_TRUE(text) << relative;
  if (!text) return m;
  m.raw = nlohmann::json::parse(*text, nullptr, false);
  EXPECT_TRUE(m.raw.is_array()) << relative << ": not a JSON list";
  auto entries = read_batch_file(source_path(relative));
  EXPECT_TRUE(entries) << entries.error().message;
  if (entries) m.entries = std::move(*entries);
  EXPECT_EQ(m.entries.size(), m.raw.size());
  return m;
}

TEST(KernelbenchCorpus, ManifestEntriesAreCompleteAndTheCoverageIsThere) {
  Manifest m = load("tests/kernelbench_corpus/manifest.json");
  ASSERT_FALSE(m.entries.empty());
  std::map<std::string, int> tag_count;
  int n_honest_gpu = 0, n_adversarial = 0, n_honest_cpu = 0;
  for (std::size_t i = 0; i < m.entries.size(); ++i) {
    const auto& raw = m.raw[i];
    const auto& e = m.entries[i];
    const std::string where = "entry " + std::to_string(i) + " (" + e.job.candidate.filename().string() + ")";
    EXPECT_TRUE(fs::is_regular_file(e.job.task)) << where << ": task " << e.job.task;
    EXPECT_TRUE(fs::is_regular_file(e.job.candidate)) << where;
    EXPECT_EQ(e.job.format, common::Format::KERNELBENCH) << where;
    ASSERT_TRUE(e.device.has_value()) << where << ": no device";
    ASSERT_TRUE(e.expect.has_value()) << where << ": no expect";
    const std::string kind = raw.value("kind", "");
    ASSERT_TRUE(kind == "honest" || kind == "adversarial") << where << ": kind '" << kind << "'";
    if (kind == "honest") {
      EXPECT_EQ(*e.expect, common::Status::OK) << where << ": an honest candidate must be expected OK";
      (*e.device == "cuda" ? n_honest_gpu : n_honest_cpu) += 1;
      ASSERT_TRUE(raw.contains("covers") && raw["covers"].is_array()) << where << ": no covers list";
      for (const auto& tag : raw["covers"]) {
        EXPECT_TRUE(kTags.count(tag.get<std::string>())) << where << ": unknown tag " << tag;
        if (*e.device == "cuda") ++tag_count[tag.get<std::string>()];
      }
    } else {
      ++n_adversarial;
    }
  }
  EXPECT_GE(n_honest_gpu, 30);
  EXPECT_GE(n_honest_cpu, 1);
  EXPECT_GE(n_adversarial, 5);
  for (const auto& tag : kTags) EXPECT_GE(tag_count[tag], 2) << "style " << tag << " is covered fewer than twice";
}

// Every candidate of the corpus and the published-style set through the static rules of its rule
// set: honest ones (and published ones under the kernelbench rules) pass; an entry expected
// REJECTED that the static rules catch says so in a way a model can act on (line and reason).
TEST(KernelbenchCorpus, HonestCandidatesPassTheStaticRulesOfTheirRuleSet) {
  int n_checked = 0;
  for (const char* manifest : {"tests/kernelbench_corpus/manifest.json", "tests/kernelbench_corpus/published/manifest.json"}) {
    if (!fs::exists(source_path(manifest))) continue;
    Manifest m = load(manifest);
    for (std::size_t i = 0; i < m.entries.size(); ++i) {
      const auto& e = m.entries[i];
      if (!e.expect || *e.expect != common::Status::OK) continue;
      auto source = common::read_file(e.job.candidate);
      ASSERT_TRUE(source) << e.job.candidate;
      const auto rules = e.job.rules.value_or(common::RuleSet::STRICT);
      auto r = compile::check_source(*source, common::Format::KERNELBENCH, e.job.candidate.filename().string(),
                                     compile::kMaxSourceBytes, true, rules);
      EXPECT_EQ(r.status, common::Status::OK)
          << e.job.candidate << " (" << common::to_string(rules) << "): " << r.message;
      ++n_checked;
    }
  }
  EXPECT_GE(n_checked, 30);
}

}  // namespace
}  // namespace kernelrl::eval
