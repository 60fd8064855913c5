// The report as one self-contained HTML file: Chart.js inlined (read from Debian's libjs-chart.js at
// run time), the report's JSON embedded, charts drawn from it, and the same tables as the terminal.
// The file opens offline; nothing is fetched.
#pragma once

#include <filesystem>
#include <string>

#include "common/expected.hpp"
#include "metrics/metrics.hpp"
#include "metrics/report_tables.hpp"

namespace kernelrl::metrics {

// Where Debian's libjs-chart.js installs the UMD build of Chart.js.
inline const std::filesystem::path default_chart_js_path = "/usr/share/javascript/chart.js/chart.min.js";

// The Chart.js source to inline; an Error naming `path` (and the package) when it cannot be read.
common::Expected<std::string> load_chart_js(const std::filesystem::path& path = default_chart_js_path);

// The HTML page. Charts: correctness and mean best speedup by turn, pass@k and best@k by k (one
// line per group: overall and each level), fast_p bars; tables: summary, fast_p, per task.
std::string render_html(const Report& report, const std::string& chart_js_source);

// `text` with &, <, >, " escaped for HTML element content and attribute values.
std::string escape_html(const std::string& text);

// Pieces shared with the other HTML reports (report_train_html), so every page looks the same and
// inlines Chart.js the same way.
// "<!DOCTYPE html>...<head>" with `title`, the page style and `chart_js_source` inlined, then "<body>".
std::string html_page_start(const std::string& title, const std::string& chart_js_source);
// Every "</" in `text` as "<\/", so JSON or JavaScript text cannot close its <script> element early.
std::string escape_script_end(const std::string& text);
// `cells` as an <h2> title and a <table>.
std::string html_table(const CellTable& cells);
// A <figure> holding the <canvas> a chart script draws into, with a caption.
std::string html_figure(const std::string& id, const std::string& caption);

}  // namespace kernelrl::metrics
