// `kernelrl report`: the metrics of a rollout or a training run, as terminal tables (or JSON) and a
// self-contained HTML file (src/metrics).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "metrics/report_html.hpp"

namespace kernelrl::cli {

struct ReportArgs {
  std::string run;   // run directory or trajectories.jsonl
  std::string html;  // empty: RUN/report.html when `run` is a directory, else no HTML
  std::string chart_js = metrics::default_chart_js_path.string();
  bool json = false;
};

// Registers `report` and its options on `app`, into `args`; returns the subcommand.
CLI::App* add_report_command(CLI::App& app, ReportArgs& args);

// Prints the report and writes the HTML file. `cmd` is the subcommand add_report_command returned:
// when neither --html nor --chart-js was given, a missing Chart.js only skips the HTML (with a
// warning). Returns the CLI's exit code: 0 reported, 2 unreadable run or Chart.js file, or the HTML
// file could not be written.
int run_report(const CLI::App& cmd, const ReportArgs& a);

}  // namespace kernelrl::cli
