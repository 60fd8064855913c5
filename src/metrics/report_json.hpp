// The report as JSON: what `kernelrl report --json` prints and what the HTML report embeds.
// Field names follow the C++ structs of metrics.hpp; absent values are null.
#pragma once

#include <nlohmann/json.hpp>

#include "metrics/metrics.hpp"

namespace kernelrl::metrics {

nlohmann::json to_json(const TaskMetrics& task);
nlohmann::json to_json(const GroupMetrics& group);

// {"schema": 1, "source", "warnings", "overall", "levels", "splits", "tasks"}
nlohmann::json to_json(const Report& report);

}  // namespace kernelrl::metrics
