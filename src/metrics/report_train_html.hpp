// The training report as one self-contained HTML file, built like the rollout report (report_html):
// Chart.js inlined, the report's JSON embedded, line charts over steps drawn from it; then the step
// table, the run's settings, and the last step's rollout tables.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "metrics/report_train.hpp"

namespace kernelrl::metrics {

// One line chart over steps: the log keys drawn on the left axis and, at another scale, the right.
struct StepChart {
  std::string id;       // the <canvas> element's id
  std::string caption;
  std::string y_title;
  std::vector<std::string> keys;
  std::string y2_title;                 // right axis; unused when right_keys is empty
  std::vector<std::string> right_keys;
};

// The charts for `log`: reward mean and max, correct rate, response length with degenerate share,
// clip fraction and approx KL with entropy, grad norm, loss, seconds per step; then one chart per
// other numeric key (new keys show up without code changes). Keys the log lacks are dropped, and so
// is a chart left with none.
std::vector<StepChart> step_charts(const TrainLog& log);

// The HTML page. `page_dir` is the folder the page is written to (default: the run directory); the
// link to the last step's own report.html, when that file exists, is relative to it.
std::string render_train_html(const TrainReport& report, const std::string& chart_js_source,
                              const std::filesystem::path& page_dir = {});

}  // namespace kernelrl::metrics
