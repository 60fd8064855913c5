// render_text: each CellTable under its title, a blank line between sections.
#include "metrics/report_text.hpp"

#include "common/table.hpp"
#include "metrics/report_tables.hpp"

namespace kernelrl::metrics {

namespace {

std::string render_section(const CellTable& cells) {
  common::Table table(cells.headers);
  for (const auto& row : cells.rows) table.add_row(row);
  return cells.title + "\n" + table.render();
}

}  // namespace

std::string render_text(const Report& report) {
  std::string out = "kernelrl report: " + report.source + "\n" + std::to_string(report.overall.n_tasks) + " tasks, " +
                    std::to_string(report.overall.n_trajectories) + " trajectories\n";
  for (const auto& section : {summary_table(report), fast_p_table(report), by_turn_table(report.overall),
                              by_k_table(report.overall), task_table(report)}) {
    out += "\n" + render_section(section);
  }
  return out;
}

}  // namespace kernelrl::metrics
