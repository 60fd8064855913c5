// `kernelrl report` as a user meets it: tables by default, JSON on request, report.html beside a
// run directory, exit 2 naming the file that could not be read.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"
#include "metrics_test_util.hpp"

namespace kernelrl::metrics {
namespace {

using testing::CliRun;
using testing::fake_chart_js;
using testing::kernelrl_report;

TEST(metrics_cli, PrintsTablesAndWarnsAboutTheTruncatedLine) {
  CliRun r = kernelrl_report({testing::data_file().string()});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("Summary"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("pass@4"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("warning: " + testing::data_file().string() + ":26"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("wrote"), std::string::npos) << r.output;  // a file argument: no HTML unless asked
}

TEST(metrics_cli, JsonOutput) {
  CliRun r = kernelrl_report({testing::data_file().string(), "--json"});
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["overall"]["n_tasks"], 3);
  EXPECT_EQ(j["overall"]["correctness"], 0.5);
}

TEST(metrics_cli, RunDirectoryGetsReportHtml) {
  auto dir = testing::scratch_dir();
  std::filesystem::copy_file(testing::data_file(), dir / "trajectories.jsonl");
  CliRun r = kernelrl_report({dir.string(), "--chart-js", fake_chart_js(dir).string()});
  ASSERT_EQ(r.code, 0) << r.output;
  auto html = common::read_file(dir / "report.html");
  ASSERT_TRUE(html) << html.error().message << "\n" << r.output;
  EXPECT_NE(html->find("stand-in Chart.js"), std::string::npos);
  EXPECT_NE(html->find("kernelrl-report-data"), std::string::npos);
  EXPECT_NE(r.output.find("wrote " + (dir / "report.html").string()), std::string::npos) << r.output;
}

TEST(metrics_cli, HtmlToAChosenFile) {
  auto dir = testing::scratch_dir();
  CliRun r = kernelrl_report({testing::data_file().string(), "--html", (dir / "out.html").string(), "--chart-js",
                              fake_chart_js(dir).string()});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir / "out.html"));
}

TEST(metrics_cli, UnreadableInputExits2NamingTheFile) {
  CliRun missing = kernelrl_report({"/no/such/run"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.output.find("/no/such/run"), std::string::npos) << missing.output;
  auto dir = testing::scratch_dir();
  auto bad = testing::write_file(dir / "trajectories.jsonl", "not json\n{\"task\": \"a.py\"}\n");
  CliRun broken = kernelrl_report({bad.string()});
  EXPECT_EQ(broken.code, 2);
  EXPECT_NE(broken.output.find(bad.string() + ":1"), std::string::npos) << broken.output;
}

TEST(metrics_cli, MissingChartJsExits2NamingThePath) {
  auto dir = testing::scratch_dir();
  std::filesystem::copy_file(testing::data_file(), dir / "trajectories.jsonl");
  CliRun r = kernelrl_report({dir.string(), "--chart-js", "/no/such/chart.min.js"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("/no/such/chart.min.js"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "report.html"));
}

TEST(metrics_cli, RunArgumentIsRequired) { EXPECT_EQ(kernelrl_report({}).code, 64); }

}  // namespace
}  // namespace kernelrl::metrics
