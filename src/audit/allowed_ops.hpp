// The PyTorch operators a kernelbench candidate may call under the `strict` rules: those that
// allocate, alias, copy or fill (empty, view, copy_, fill_, ...), what a candidate needs around its
// own kernels; everything that computes (aten::mm, aten::add, ...) is refused. One list for the
// evaluator's dispatch-mode audit (eval/op_audit.hpp) and the recorder below Python
// (audit/op_record.hpp). No torch here: plain names.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <string_view>

namespace kernelrl::audit {

// The allowed operators' schema names without namespace or overload ("view", "copy_"); built once,
// never changes (safe from any thread).
const std::set<std::string, std::less<>>& allowed_ops();

// Whether an operator (schema name without overload, "aten::view") is one a kernelbench candidate
// may call: an "aten::" name of allowed_ops(). Any thread.
bool torch_op_allowed(std::string_view schema_name);

}  // namespace kernelrl::audit
