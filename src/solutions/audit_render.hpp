// `kernelrl audit`'s table for the terminal and as one self-contained HTML page (no script, nothing
// fetched): a row per solution (audit_row.hpp), then the summary.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "solutions/audit_row.hpp"

namespace kernelrl::solutions {

std::string render_audit_text(const std::vector<AuditRow>& rows, const nlohmann::json& summary);
std::string render_audit_html(const std::vector<AuditRow>& rows, const nlohmann::json& summary);

}  // namespace kernelrl::solutions
