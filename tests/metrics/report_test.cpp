// The rendered report: terminal tables, JSON, and the self-contained HTML page.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "metrics/report_html.hpp"
#include "metrics/report_json.hpp"
#include "metrics/report_tables.hpp"
#include "metrics/report_text.hpp"
#include "metrics_test_util.hpp"

namespace kernelrl::metrics {
namespace {

Report hand_made_report() {
  auto report = report_from_run(testing::data_file());
  EXPECT_TRUE(report) << report.error().message;
  return report ? *report : Report{};
}

// The line of `text` that starts with `prefix`, or "" when none does.
std::string line_starting(const std::string& text, const std::string& prefix) {
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, prefix.size(), prefix) == 0) return text.substr(at, end - at);
    at = end + 1;
  }
  return "";
}

// Whitespace-separated cells of a table line.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string cell; in >> cell;) out.push_back(cell);
  return out;
}

TEST(metrics_format, Cells) {
  EXPECT_EQ(format_percent(0.5), "50.0%");
  EXPECT_EQ(format_percent(2.0 / 3), "66.7%");
  EXPECT_EQ(format_speedup(14.0 / 6), "2.33x");
  EXPECT_EQ(format_p(1.5), "1.5");
  EXPECT_EQ(format_p(2), "2");
}

TEST(metrics_report_text, SummaryRowsCarryTheNumbers) {
  const std::string text = render_text(hand_made_report());
  EXPECT_NE(text.find("kernelrl report: " + testing::data_file().string()), std::string::npos) << text;
  EXPECT_NE(text.find("3 tasks, 12 trajectories"), std::string::npos) << text;
  EXPECT_EQ(cells(line_starting(text, "group ")),
            (std::vector<std::string>{"group", "tasks", "traj", "correct", "solved", "pass@1", "pass@2", "pass@4",
                                      "best@1", "best@2", "best@4", "best", "geomean"}));  // no avg@k: it is best@1
  // name, tasks, traj, correct, solved, pass@1,2,4, best@1,2,4, best, geomean
  EXPECT_EQ(cells(line_starting(text, "overall ")),
            (std::vector<std::string>{"overall", "3", "12", "50.0%", "100.0%", "50.0%", "77.8%", "100.0%", "0.65x",
                                      "1.04x", "1.40x", "1.40x", "1.90x"}));
  EXPECT_EQ(cells(line_starting(text, "level none ")),
            (std::vector<std::string>{"level", "none", "1", "4", "25.0%", "100.0%", "25.0%", "50.0%", "100.0%", "0.00x",
                                      "0.00x", "0.00x", "0.00x", "-"}));
}

TEST(metrics_report_text, FastPScalingAndTaskTables) {
  const std::string text = render_text(hand_made_report());
  // The second "overall" row is the fast_p table's: best of all, then one trajectory.
  const std::size_t fast_at = text.find("fast_p:");
  ASSERT_NE(fast_at, std::string::npos) << text;
  EXPECT_EQ(cells(line_starting(text.substr(fast_at), "overall ")),
            (std::vector<std::string>{"overall", "66.7%", "66.7%", "33.3%", "33.3%", "41.7%", "25.0%", "16.7%", "8.3%"}));
  const std::size_t turns_at = text.find("Serial scaling (overall)");
  ASSERT_NE(turns_at, std::string::npos) << text;
  EXPECT_EQ(cells(line_starting(text.substr(turns_at), "   2 ")), (std::vector<std::string>{"2", "50.0%", "0.65x"}));
  const std::size_t ks_at = text.find("Parallel scaling (overall)");
  ASSERT_NE(ks_at, std::string::npos) << text;
  EXPECT_EQ(cells(line_starting(text.substr(ks_at), "2 ")), (std::vector<std::string>{"2", "77.8%", "1.04x"}));
  EXPECT_EQ(cells(line_starting(text, "001_relu ")),
            (std::vector<std::string>{"001_relu", "1", "train", "4", "2", "75.0%", "75.0%", "1.50x", "3.00x",
                                      "yes", "yes", "yes", "yes"}));
}

TEST(metrics_report_json, CarriesEveryGroupAndTask) {
  const nlohmann::json j = to_json(hand_made_report());
  EXPECT_EQ(j["schema"], 1);
  EXPECT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(j["overall"]["n_tasks"], 3);
  EXPECT_NEAR(j["overall"]["pass_at_k"][1]["value"].get<double>(), (1 + 5.0 / 6 + 0.5) / 3, 1e-12);
  EXPECT_EQ(j["overall"]["pass_at_k"][1]["k"], 2);
  EXPECT_EQ(j["levels"].size(), 3u);
  EXPECT_TRUE(j["levels"][2]["geomean_speedup"].is_null());
  EXPECT_EQ(j["splits"].size(), 2u);
  ASSERT_EQ(j["tasks"].size(), 3u);
  EXPECT_TRUE(j["tasks"][0]["level"].is_null());
  EXPECT_EQ(j["tasks"][1]["fast_p"][3]["p"], 2.0);
  EXPECT_EQ(j["tasks"][1]["by_turn"][1]["mean_best_speedup"], 1.5);
  // avg@k, the mean over trajectories, equals best@1 by construction: reported once, as best@1.
  EXPECT_FALSE(j["overall"].contains("avg_speedup"));
  EXPECT_FALSE(j["tasks"][1].contains("avg_speedup"));
  EXPECT_EQ(j["tasks"][1]["best_at_k"][0]["k"], 1);
  EXPECT_EQ(j["tasks"][1]["best_at_k"][0]["value"], 1.5);
}

TEST(metrics_report_html, InlinesChartJsAndEmbedsTheData) {
  const Report report = hand_made_report();
  const std::string chart_js = "/* stand-in Chart.js */ window.Chart = function (el, config) { el.config = config; };";
  const std::string html = render_html(report, chart_js);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<script>\n" + chart_js + "\n</script>"), std::string::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);  // nothing fetched: opens offline
  for (const char* id : {"chart-correct-by-turn", "chart-speedup-by-turn", "chart-pass-at-k", "chart-best-at-k", "chart-fast-p"}) {
    EXPECT_NE(html.find("<canvas id=\"" + std::string(id) + "\">"), std::string::npos) << id;
    const bool drawn = html.find("lineChart('" + std::string(id) + "'") != std::string::npos ||
                       html.find("getElementById('" + std::string(id) + "')") != std::string::npos;
    EXPECT_TRUE(drawn) << id << " is not drawn by the chart script";
  }
  const std::string open = "<script type=\"application/json\" id=\"kernelrl-report-data\">";
  const std::size_t begin = html.find(open);
  ASSERT_NE(begin, std::string::npos);
  const std::size_t end = html.find("</script>", begin);
  const auto embedded = nlohmann::json::parse(html.substr(begin + open.size(), end - begin - open.size()));
  EXPECT_EQ(embedded, to_json(report));
  EXPECT_NE(html.find("<td>001_relu</td>"), std::string::npos);  // per-task table
  EXPECT_NE(html.find("<li>"), std::string::npos);               // the truncated-line warning
}

TEST(metrics_report_html, TextThatCouldCloseAScriptIsEscaped) {
  Report report = hand_made_report();
  report.tasks[0].task_id = "</script><b>x";
  report.source = "a&b";
  const std::string html = render_html(report, "var s = '</script>';");
  EXPECT_NE(html.find("var s = '<\\/script>';"), std::string::npos);
  EXPECT_NE(html.find("<td>&lt;/script&gt;&lt;b&gt;x</td>"), std::string::npos);
  EXPECT_NE(html.find("<\\/script><b>x"), std::string::npos);  // inside the embedded JSON
  EXPECT_NE(html.find("a&amp;b"), std::string::npos);
  // Opening and closing script tags still pair up: 3 scripts (Chart.js, data, charts).
  std::size_t n_close = 0;
  for (std::size_t at = html.find("</script>"); at != std::string::npos; at = html.find("</script>", at + 1)) ++n_close;
  EXPECT_EQ(n_close, 3u);
}

TEST(metrics_report_html, MissingChartJsNamesThePathAndThePackage) {
  auto missing = load_chart_js("/no/such/chart.min.js");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/no/such/chart.min.js"), std::string::npos) << missing.error().message;
  EXPECT_NE(missing.error().message.find("libjs-chart.js"), std::string::npos) << missing.error().message;
}

TEST(metrics_report_html, DebianChartJsLoads) {
  if (!std::filesystem::exists(default_chart_js_path)) {
    GTEST_SKIP() << default_chart_js_path << " is missing: install Debian's libjs-chart.js (scripts/setup.sh)";
  }
  auto chart_js = load_chart_js();
  ASSERT_TRUE(chart_js) << chart_js.error().message;
  EXPECT_NE(chart_js->find("Chart.js v"), std::string::npos);
  const std::string html = render_html(hand_made_report(), *chart_js);
  EXPECT_NE(html.find("Chart.js v"), std::string::npos);
}

}  // namespace
TEST(metrics_report_html, DrillsDownToEachTrajectorysTurnsWithEscapedCode) {
  Report report = hand_made_report();
  TurnRecord wrong;
  wrong.task = "tasks/level1/001_relu.py";
  wrong.trajectory = 3;
  wrong.turn = 1;
  wrong.code = "__global__ void k() { if (a < b && c > d) {} }";
  wrong.status = "WRONG_OUTPUT";
  wrong.feedback = "output 0: 12 of 1024 elements differ";
  TurnRecord right = wrong;
  right.turn = 2;
  right.status = "OK";
  right.feedback.clear();
  right.score = 1.8;
  right.speedup = 1.5;
  report.turns = {right, wrong};  // out of order on purpose
  const std::string html = render_html(report, "/* chart */");
  EXPECT_NE(html.find("<summary>tasks/level1/001_relu.py (1 trajectories)</summary>"), std::string::npos);
  EXPECT_NE(html.find("<summary>trajectory 3</summary>"), std::string::npos);
  EXPECT_NE(html.find("a &lt; b &amp;&amp; c &gt; d"), std::string::npos);
  EXPECT_EQ(html.find("a < b && c > d"), std::string::npos);
  const auto first = html.find("<td>1</td><td>WRONG_OUTPUT</td>");
  const auto second = html.find("<td>2</td><td>OK</td><td>1.800</td><td>1.50x</td>");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  EXPECT_LT(first, second);
  EXPECT_NE(html.find("output 0: 12 of 1024 elements differ"), std::string::npos);
}

}  // namespace kernelrl::metrics
