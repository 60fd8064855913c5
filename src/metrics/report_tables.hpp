// The report's tables as rows of formatted cells, shared by the terminal report (common::Table)
// and the HTML report (<table>), so both show the same numbers the same way.
#pragma once

#include <string>
#include <vector>

#include "metrics/metrics.hpp"

namespace kernelrl::metrics {

struct CellTable {
  std::string title;
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
};

std::string format_percent(double fraction);  // 0.5 -> "50.0%"
std::string format_speedup(double speedup);   // 1.4 -> "1.40x"
std::string format_p(double p);               // 1.5 -> "1.5", 2 -> "2"

// One row per group (overall, levels, splits): correctness, solved, pass@k, best@k, best, geomean.
CellTable summary_table(const Report& report);
// One row per group: fast_p at the best of all trajectories and at one trajectory.
CellTable fast_p_table(const Report& report);
// The overall group's serial scaling curve.
CellTable by_turn_table(const GroupMetrics& group);
// The overall group's parallel scaling curve.
CellTable by_k_table(const GroupMetrics& group);
// One row per task.
CellTable task_table(const Report& report);

}  // namespace kernelrl::metrics
