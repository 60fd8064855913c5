// The training report: reading train_log.jsonl (truncated last line, repeated step, errors naming the
// line), the step table and reward summary, JSON, the self-contained HTML page, and `kernelrl report`
// on a small training run directory made here.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"
#include "metrics/report_train.hpp"
#include "metrics/report_train_html.hpp"
#include "metrics_test_util.hpp"

namespace kernelrl::metrics {
namespace {

// One step line as the trainer writes it (a subset of its keys), plus `extra` fields ("" for none).
std::string step_line(int step, double reward, double correct, const std::string& extra = "") {
  return R"({"step": )" + std::to_string(step) + R"(, "n_episodes": 8, "reward/mean": )" + std::to_string(reward) +
         R"(, "reward/max": 1.5, "eval/correct_rate": )" + std::to_string(correct) +
         R"(, "response/mean_tokens": 412.4, "response/degenerate_frac": 0.125, "train/loss": -0.01,)"
         R"( "train/clip_frac": 0.07, "train/approx_kl": 0.00123, "train/entropy": 1.25, "train/grad_norm": 0.5,)"
         R"( "time/rollout_s": 12.34, "time/update_s": 3.5)" +
         (extra.empty() ? "" : ", " + extra) + "}";
}

// A training run directory: train.json, a three-step log, and the last step's rollout.
std::filesystem::path make_training_run(const std::filesystem::path& dir) {
  testing::write_file(dir / "train.json",
                      R"({"model": "models/tiny</script><b>", "n_steps": 3, "lr": 1e-06, "tasks": ["tasks/level1"],)"
                      R"( "update": {"grpo": {"eps_low": 0.2}, "minibatches": 2}})");
  testing::write_file(dir / "train_log.jsonl", step_line(1, 0.1, 0.25) + "\n" +
                                                   step_line(2, 0.35, 0.5, R"("custom/new_key": 7.5)") + "\n" +
                                                   step_line(3, 0.3, 0.5) + "\n");
  std::filesystem::create_directories(dir / "steps" / "step-00003");
  testing::write_file(dir / "steps/step-00003/trajectories.jsonl",
                      testing::turn_line("tasks/a.py", 0, 1, true, "1.5") + "\n" +
                          testing::turn_line("tasks/a.py", 1, 1, false, "null") + "\n");
  return dir;
}

TrainReport read_report(const std::filesystem::path& dir) {
  auto report = train_report_from_run(dir);
  EXPECT_TRUE(report) << report.error().message;
  return report ? *report : TrainReport{};
}

TEST(metrics_train_log, ReadsStepsAndEveryNumericKeyInFileOrder) {
  auto dir = testing::scratch_dir();
  auto file = testing::write_file(dir / "train_log.jsonl",
                                  R"({"step": 1, "zeta/x": 2, "alpha/y": 0.5, "note": "text", "missing": null})" "\n"
                                  "\n"
                                  R"({"step": 2, "zeta/x": 3, "beta/z": 1})" "\n");
  auto log = read_train_log(file);
  ASSERT_TRUE(log) << log.error().message;
  ASSERT_EQ(log->steps.size(), 2u);
  EXPECT_EQ(log->steps[0].step, 1);
  EXPECT_EQ(value_of(log->steps[0], "alpha/y"), 0.5);
  EXPECT_EQ(value_of(log->steps[1], "zeta/x"), 3.0);
  EXPECT_FALSE(value_of(log->steps[0], "missing"));  // null
  EXPECT_FALSE(value_of(log->steps[0], "note"));     // not a number
  EXPECT_FALSE(value_of(log->steps[1], "alpha/y"));  // absent from that line
  EXPECT_EQ(log->keys, (std::vector<std::string>{"zeta/x", "alpha/y", "beta/z"}));
  EXPECT_TRUE(log->warnings.empty());
}

TEST(metrics_train_log, TruncatedLastLineIsSkippedWithAWarning) {
  auto dir = testing::scratch_dir();
  auto file = testing::write_file(dir / "train_log.jsonl",
                                  step_line(1, 0.1, 0) + "\n" + step_line(2, 0.2, 0) + "\n" + R"({"step": 3, "rew)");
  auto log = read_train_log(file);
  ASSERT_TRUE(log) << log.error().message;
  ASSERT_EQ(log->steps.size(), 2u);
  EXPECT_EQ(log->steps.back().step, 2);
  ASSERT_EQ(log->warnings.size(), 1u);
  EXPECT_NE(log->warnings[0].find(file.string() + ":3"), std::string::npos) << log->warnings[0];
}

TEST(metrics_train_log, RepeatedStepKeepsTheLastLineAndStepsAreSorted) {
  auto dir = testing::scratch_dir();
  auto file = testing::write_file(dir / "train_log.jsonl", step_line(2, 0.2, 0) + "\n" + step_line(1, 0.1, 0) + "\n" +
                                                               step_line(2, 0.9, 0) + "\n");
  auto log = read_train_log(file);
  ASSERT_TRUE(log) << log.error().message;
  ASSERT_EQ(log->steps.size(), 2u);
  EXPECT_EQ(log->steps[0].step, 1);
  EXPECT_EQ(log->steps[1].step, 2);
  EXPECT_EQ(value_of(log->steps[1], "reward/mean"), 0.9);
  ASSERT_EQ(log->warnings.size(), 1u);
  EXPECT_NE(log->warnings[0].find(file.string() + ":3: repeats step 2"), std::string::npos) << log->warnings[0];
}

TEST(metrics_train_log, MalformedLinesAreErrorsNamingFileAndLine) {
  auto dir = testing::scratch_dir();
  auto bad_json = testing::write_file(dir / "a.jsonl", step_line(1, 0.1, 0) + "\nnot json\n" + step_line(3, 0.1, 0) + "\n");
  auto r = read_train_log(bad_json);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find(bad_json.string() + ":2"), std::string::npos) << r.error().message;

  auto no_step = testing::write_file(dir / "b.jsonl", step_line(1, 0.1, 0) + "\n" + R"({"reward/mean": 1})" "\n");
  r = read_train_log(no_step);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find(no_step.string() + ":2: missing field `step`"), std::string::npos) << r.error().message;

  auto bad_step = testing::write_file(dir / "c.jsonl", R"({"step": "one"})" "\n");
  r = read_train_log(bad_step);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find(bad_step.string() + ":1: field `step` is not an integer"), std::string::npos)
      << r.error().message;

  r = read_train_log(dir / "missing.jsonl");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find((dir / "missing.jsonl").string()), std::string::npos) << r.error().message;
}

TEST(metrics_train_report, ShownStepsAreAllOrEvenlySpacedWithTheLast) {
  EXPECT_EQ(shown_step_indices(3, 40), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(shown_step_indices(40, 40).size(), 40u);
  const auto shown = shown_step_indices(1000, 40);
  ASSERT_EQ(shown.size(), 40u);
  EXPECT_EQ(shown.front(), 0u);
  EXPECT_EQ(shown.back(), 999u);
  for (std::size_t i = 1; i < shown.size(); ++i) {
    const std::size_t gap = shown[i] - shown[i - 1];
    EXPECT_TRUE(gap == 25 || gap == 26) << "gap " << gap << " at row " << i;  // 999 / 39 = 25.6
  }
}

TEST(metrics_train_report, StepTableAndRewardSummary) {
  auto dir = make_training_run(testing::scratch_dir());
  const TrainReport report = read_report(dir);
  const CellTable table = train_step_table(report.log);
  EXPECT_EQ(table.headers, (std::vector<std::string>{"step", "reward", "correct", "tokens", "degenerate", "clip",
                                                     "approx_kl", "entropy", "grad_norm", "rollout_s", "update_s"}));
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(table.rows[1], (std::vector<std::string>{"2", "0.350", "50.0%", "412", "12.5%", "0.070", "0.00123",
                                                            "1.250", "0.5", "12.3", "3.5"}));
  auto reward = reward_summary(report.log);
  ASSERT_TRUE(reward);
  EXPECT_EQ(reward->best_step, 2);
  EXPECT_DOUBLE_EQ(reward->first, 0.1);
  EXPECT_DOUBLE_EQ(reward->last, 0.3);

  const std::string text = render_train_text(report);
  EXPECT_NE(text.find("3 steps logged (steps 1..3)"), std::string::npos) << text;
  EXPECT_NE(text.find("reward/mean: 0.100 at step 1 -> 0.300 at step 3 (+0.200); best 0.350 at step 2"),
            std::string::npos) << text;
  EXPECT_NE(text.find("last step's rollout (" + (dir / "steps/step-00003").string() +
                      "): 1 tasks, 2 trajectories, correct 50.0%"),
            std::string::npos)
      << text;
}

TEST(metrics_train_report, LongRunTableShowsFortyRowsEndingWithTheLastStep) {
  auto dir = testing::scratch_dir();
  std::string lines;
  for (int step = 1; step <= 100; ++step) lines += step_line(step, 0.01 * step, 0) + "\n";
  testing::write_file(dir / "train_log.jsonl", lines);
  auto log = read_train_log(dir / "train_log.jsonl");
  ASSERT_TRUE(log) << log.error().message;
  const CellTable table = train_step_table(*log);
  ASSERT_EQ(table.rows.size(), 40u);
  EXPECT_EQ(table.rows.front()[0], "1");
  EXPECT_EQ(table.rows.back()[0], "100");
  EXPECT_NE(table.title.find("40 of 100"), std::string::npos) << table.title;
}

TEST(metrics_train_report, MissingPiecesWarnButAnEmptyLogIsAnError) {
  auto dir = testing::scratch_dir();
  testing::write_file(dir / "train_log.jsonl", step_line(1, 0.1, 0) + "\n");
  const TrainReport report = read_report(dir);
  EXPECT_TRUE(report.settings.is_null());
  EXPECT_FALSE(report.last_step_report);
  ASSERT_EQ(report.warnings.size(), 2u);
  EXPECT_NE(report.warnings[0].find((dir / "train.json").string()), std::string::npos) << report.warnings[0];
  EXPECT_NE(report.warnings[1].find((dir / "steps/step-00001").string()), std::string::npos) << report.warnings[1];

  testing::write_file(dir / "train_log.jsonl", "");
  auto empty = train_report_from_run(dir);
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("holds no step records"), std::string::npos) << empty.error().message;
}

TEST(metrics_train_report, TrainingRunDirIsRecognised) {
  auto dir = make_training_run(testing::scratch_dir());
  EXPECT_EQ(training_run_dir(dir), dir);
  EXPECT_EQ(training_run_dir(dir / "train_log.jsonl"), dir);
  EXPECT_FALSE(training_run_dir(dir / "steps/step-00003"));
  EXPECT_FALSE(training_run_dir(dir / "steps/step-00003/trajectories.jsonl"));
  EXPECT_EQ(step_dir_name(12), "step-00012");
}

TEST(metrics_train_report, JsonHoldsEveryStepAndKey) {
  auto dir = make_training_run(testing::scratch_dir());
  const nlohmann::json j = to_json(read_report(dir));
  EXPECT_EQ(j["kind"], "train");
  ASSERT_EQ(j["steps"].size(), 3u);
  EXPECT_EQ(j["steps"][1]["step"], 2);
  EXPECT_EQ(j["steps"][1]["custom/new_key"], 7.5);
  EXPECT_TRUE(j["steps"][1]["n_episodes"].is_number_integer());
  EXPECT_FALSE(j["steps"][0].contains("custom/new_key"));
  EXPECT_EQ(j["reward"]["best_step"], 2);
  EXPECT_EQ(j["settings"]["n_steps"], 3);
  EXPECT_EQ(j["last_step"]["overall"]["n_trajectories"], 2);
}

TEST(metrics_train_html, ChartsKeepPresentKeysAndAddNewOnes) {
  auto dir = make_training_run(testing::scratch_dir());
  const auto charts = step_charts(read_report(dir).log);
  std::vector<std::string> ids;
  for (const auto& c : charts) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"chart-reward", "chart-correct", "chart-response", "chart-policy",
                                           "chart-grad-norm", "chart-loss", "chart-time", "chart-other-1",
                                           "chart-other-2"}));
  EXPECT_EQ(charts[7].keys, (std::vector<std::string>{"n_episodes"}));
  EXPECT_EQ(charts[8].keys, (std::vector<std::string>{"custom/new_key"}));

  TrainLog only_reward;
  only_reward.keys = {"reward/mean"};
  const auto few = step_charts(only_reward);
  ASSERT_EQ(few.size(), 1u);
  EXPECT_EQ(few[0].keys, (std::vector<std::string>{"reward/mean"}));
}

// A run with held-out evaluation (src/train/heldout.hpp): a step-0 line holding only held-out keys
// and held-out keys on some step lines; the table gains a held-out column and the charts their own.
TEST(metrics_train_report, HeldOutLinesGetTheirColumnAndCharts) {
  auto dir = testing::scratch_dir();
  const std::string heldout_0 = R"({"step": 0, "heldout/correct_rate": 0.125, "heldout/turn1_correct_rate": 0.1,)"
                                R"( "heldout/tasks_solved_frac": 0.25, "heldout/mean_speedup_correct": 0.9})";
  testing::write_file(dir / "train_log.jsonl",
                      heldout_0 + "\n" + step_line(1, 0.1, 0.25) + "\n" +
                          step_line(2, 0.35, 0.5, R"("heldout/correct_rate": 0.375, "heldout/turn1_correct_rate": 0.3)") +
                          "\n");
  const TrainReport report = read_report(dir);
  const CellTable table = train_step_table(report.log);
  ASSERT_EQ(table.headers.size(), 12u);
  EXPECT_EQ(table.headers[3], "held-out");
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(table.rows[0][0], "0");
  EXPECT_EQ(table.rows[0][1], "-");  // no training at step 0: only the starting policy's held-out numbers
  EXPECT_EQ(table.rows[0][3], "12.5%");
  EXPECT_EQ(table.rows[1][3], "-");
  EXPECT_EQ(table.rows[2][3], "37.5%");
  auto reward = reward_summary(report.log);
  ASSERT_TRUE(reward);
  EXPECT_EQ(reward->first_step, 1);  // the step-0 line has no reward
  std::vector<std::string> ids;
  for (const auto& c : step_charts(report.log)) {
    ids.push_back(c.id);
    if (c.id == "chart-heldout") {
      EXPECT_EQ(c.keys, (std::vector<std::string>{"heldout/turn1_correct_rate", "heldout/tasks_solved_frac"}));
    }
    if (c.id == "chart-correct") EXPECT_EQ(c.keys, (std::vector<std::string>{"eval/correct_rate", "heldout/correct_rate"}));
  }
  EXPECT_NE(std::find(ids.begin(), ids.end(), "chart-heldout"), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), "chart-heldout-speed"), ids.end());
}

TEST(metrics_train_html, PageInlinesChartJsAndEmbedsTheStepData) {
  auto dir = make_training_run(testing::scratch_dir());
  const std::string html = render_train_html(read_report(dir), "/* stand-in Chart.js */ window.Chart = function () {};");
  EXPECT_NE(html.find("<script>\n/* stand-in Chart.js */"), std::string::npos);
  EXPECT_NE(html.find("id=\"kernelrl-train-data\""), std::string::npos);
  for (const char* id :
       {"chart-reward", "chart-correct", "chart-response", "chart-policy", "chart-grad-norm", "chart-time"}) {
    EXPECT_NE(html.find("<canvas id=\"" + std::string(id) + "\">"), std::string::npos) << id;
  }
  // The charts' data: every step's values, embedded as JSON.
  const std::size_t data_at = html.find("id=\"kernelrl-train-data\">");
  ASSERT_NE(data_at, std::string::npos);
  const std::size_t data_begin = html.find('>', data_at) + 1;
  const std::size_t data_end = html.find("</script>", data_begin);
  auto data = nlohmann::json::parse(html.substr(data_begin, data_end - data_begin), nullptr, false);
  ASSERT_FALSE(data.is_discarded());
  ASSERT_EQ(data["steps"].size(), 3u);
  EXPECT_EQ(data["steps"][1]["reward/mean"], 0.35);
  EXPECT_EQ(data["charts"][0]["keys"], (nlohmann::json{"reward/mean", "reward/max"}));
  EXPECT_EQ(data["settings"]["model"], "models/tiny</script><b>");  // escaped as <\/ in the page, parsed back
  EXPECT_EQ(html.find("tiny</script>"), std::string::npos);         // never raw: it would end the data element
  // Settings, the step table and the last step's rollout tables.
  EXPECT_NE(html.find("Settings (train.json)"), std::string::npos);
  EXPECT_NE(html.find("<td>lr</td><td>1e-06</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>update.grpo.eps_low</td><td>0.2</td>"), std::string::npos);  // nested: by dotted path
  EXPECT_NE(html.find("<td>update.minibatches</td><td>2</td>"), std::string::npos);
  EXPECT_NE(html.find("<h2>Training steps</h2>"), std::string::npos);
  EXPECT_NE(html.find("Last step's rollout (step 3)"), std::string::npos);
  EXPECT_NE(html.find("<h2>Per task</h2>"), std::string::npos);
}

TEST(metrics_train_html, LinksTheLastStepsOwnReportRelativeToThePage) {
  auto dir = make_training_run(testing::scratch_dir());
  testing::write_file(dir / "steps/step-00003/report.html", "<html></html>");
  const TrainReport report = read_report(dir);
  EXPECT_NE(render_train_html(report, "").find("href=\"steps/step-00003/report.html\""), std::string::npos);
  std::filesystem::create_directories(dir / "pages");
  EXPECT_NE(render_train_html(report, "", dir / "pages").find("href=\"../steps/step-00003/report.html\""),
            std::string::npos);
}

// `kernelrl report` on training run directories.
using testing::CliRun;
using testing::kernelrl_report;

TEST(metrics_train_cli, TrainingRunGetsTheStepTableAndReportHtml) {
  auto dir = make_training_run(testing::scratch_dir());
  auto chart_js = testing::fake_chart_js(dir);
  CliRun r = kernelrl_report({dir.string(), "--chart-js", chart_js.string()});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("Training steps"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("best 0.350 at step 2"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("Summary (means over tasks"), std::string::npos) << r.output;  // not the rollout report
  EXPECT_NE(r.output.find("wrote " + (dir / "report.html").string()), std::string::npos) << r.output;
  auto html = common::read_file(dir / "report.html");
  ASSERT_TRUE(html) << html.error().message;
  EXPECT_NE(html->find("stand-in Chart.js"), std::string::npos);
  EXPECT_NE(html->find("kernelrl-train-data"), std::string::npos);
}

TEST(metrics_train_cli, JsonPrintsEveryStep) {
  auto dir = make_training_run(testing::scratch_dir());
  CliRun r = kernelrl_report({(dir / "train_log.jsonl").string(), "--json"});  // the log file itself: no HTML
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["kind"], "train");
  EXPECT_EQ(j["steps"].size(), 3u);
  EXPECT_FALSE(std::filesystem::exists(dir / "report.html"));
}

TEST(metrics_train_cli, MalformedLogExits2NamingTheLine) {
  auto dir = make_training_run(testing::scratch_dir());
  testing::write_file(dir / "train_log.jsonl", step_line(1, 0.1, 0) + "\n{oops\n" + step_line(3, 0.1, 0) + "\n");
  CliRun r = kernelrl_report({dir.string(), "--json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find((dir / "train_log.jsonl").string() + ":2"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kernelrl::metrics
