#include "report_command.hpp"

#include <filesystem>
#include <iostream>
#include <optional>

#include "common/fs.hpp"
#include "metrics/metrics.hpp"
#include "metrics/report_json.hpp"
#include "metrics/report_text.hpp"
#include "metrics/report_train.hpp"
#include "metrics/report_train_html.hpp"
#include "exit_codes.hpp"

namespace kernelrl::cli {

namespace {

constexpr int kReported = kEvaluated;
constexpr int kCouldNotReport = kCouldNotEvaluate;

}  // namespace

CLI::App* add_report_command(CLI::App& app, ReportArgs& args) {
  auto* cmd = app.add_subcommand("report", "metrics of a rollout: terminal tables and a self-contained HTML file");
  cmd->add_option("run", args.run, "run directory or trajectories.jsonl")->required();
  cmd->add_option("--html", args.html,
                  "write the HTML report to this file (default: RUN/report.html for a run directory)");
  cmd->add_flag("--json", args.json, "print the metrics as JSON instead of tables");
  cmd->add_option("--chart-js", args.chart_js, "Chart.js file inlined into the HTML report")->capture_default_str();
  return cmd;
}

int run_report(const CLI::App& cmd, const ReportArgs& a) {
  const bool html_optional = cmd.count("--html") == 0 && cmd.count("--chart-js") == 0;
  // A training run (train_log.jsonl, train.json) gets the training report; anything else is a rollout.
  std::optional<metrics::TrainReport> training;
  std::optional<metrics::Report> rollout;
  if (auto train_dir = metrics::training_run_dir(a.run)) {
    auto report = metrics::train_report_from_run(*train_dir);
    if (!report) {
      std::cerr << "kernelrl report: " << report.error().message << "\n";
      return kCouldNotReport;
    }
    training = std::move(*report);
  } else {
    auto report = metrics::report_from_run(a.run);
    if (!report) {
      std::cerr << "kernelrl report: " << report.error().message << "\n";
      return kCouldNotReport;
    }
    rollout = std::move(*report);
  }
  for (const auto& w : training ? training->warnings : rollout->warnings) {
    std::cerr << "kernelrl report: warning: " << w << "\n";
  }
  std::filesystem::path html_path = a.html;
  std::error_code ec;
  if (html_path.empty() && std::filesystem::is_directory(a.run, ec)) html_path = std::filesystem::path(a.run) / "report.html";
  std::string chart_js;
  if (!html_path.empty()) {
    auto loaded = metrics::load_chart_js(a.chart_js);
    if (!loaded && !html_optional) {
      std::cerr << "kernelrl report: " << loaded.error().message << "\n";
      return kCouldNotReport;
    }
    if (!loaded) {
      std::cerr << "kernelrl report: warning: no HTML report: " << loaded.error().message << "\n";
      html_path.clear();
    } else {
      chart_js = std::move(*loaded);
    }
  }
  if (training) {
    std::cout << (a.json ? metrics::to_json(*training).dump(2) + "\n" : metrics::render_train_text(*training));
  } else {
    std::cout << (a.json ? metrics::to_json(*rollout).dump(2) + "\n" : metrics::render_text(*rollout));
  }
  std::cout << std::flush;
  if (html_path.empty()) return kReported;
  const std::string html = training ? metrics::render_train_html(*training, chart_js,
                                                                 std::filesystem::absolute(html_path, ec).parent_path())
                                    : metrics::render_html(*rollout, chart_js);
  auto written = common::write_file_atomic(html_path, html);
  if (!written) {
    std::cerr << "kernelrl report: " << written.error().message << "\n";
    return kCouldNotReport;
  }
  std::cerr << "kernelrl report: wrote " << html_path.string() << "\n";
  return kReported;
}

}  // namespace kernelrl::cli
