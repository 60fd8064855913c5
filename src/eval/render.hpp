// Text renderings of results for the terminal: one evaluation, a batch summary, a task signature.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"
#include "eval/engine.hpp"
#include "eval/result.hpp"

namespace kernelrl::eval {

std::string render_result(const EvalResult& r);

// One row per job plus a count per status; `labels` name the jobs.
std::string render_summary(const std::vector<std::string>& labels,
                           const std::vector<common::Expected<EvalResult>>& results);

std::string render_task_info(const std::string& task_path, const TaskInfo& info);

}  // namespace kernelrl::eval
