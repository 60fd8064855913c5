// The report for the terminal: a header line, then the summary, fast_p, serial and parallel
// scaling (overall) and per-task tables.
#pragma once

#include <string>

#include "metrics/metrics.hpp"

namespace kernelrl::metrics {

// The whole report as '\n'-terminated lines. Warnings are not included (the CLI prints them to stderr).
std::string render_text(const Report& report);

}  // namespace kernelrl::metrics
