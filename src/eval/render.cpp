#include "eval/render.hpp"

#include <cstdio>
#include <map>
#include <sstream>

#include "common/format.hpp"
#include "common/table.hpp"

namespace kernelrl::eval {

using common::format_fixed;

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string spread(const TimingSummary& t) {
  return format_fixed(t.median_us, 1) + " us (p10 " + format_fixed(t.p10_us, 1) + ", p90 " + format_fixed(t.p90_us, 1) + ", n " +
         std::to_string(t.n) + ")";
}

}  // namespace

std::string render_result(const EvalResult& r) {
  std::ostringstream s;
  s << "status     " << common::to_string(r.status) << (r.correct ? " (correct)" : "") << "\n";
  s << "task       " << r.task << "\ncandidate  " << r.candidate << " [" << r.format << ", " << r.device << "]\n";
  if (r.runtime.n > 0) s << "runtime    " << spread(r.runtime) << "\n";
  if (r.ref_runtime.n > 0) s << "reference  " << spread(r.ref_runtime) << "\n";
  if (r.correct && r.speedup > 0) s << "speedup    " << format_fixed(r.speedup, 3) << "x\n";
  if (r.timing_unstable) {
    s << "warning    timing unstable: the timed calls waited " << format_fixed(100 * r.cpu_wait_fraction, 1)
      << "% of their time for a CPU held by other work; the runtimes and speedup measure the machine's load\n";
  }
  if (r.sol_us > 0) {
    s << "sol        " << format_fixed(r.sol_us, 1) << " us (speed of light on this GPU)";
    if (r.sol_fraction > 0) s << ", candidate at " << format_fixed(100 * r.sol_fraction, 1) << "% of it";
    s << "\n";
  }
  if (!r.error.message.empty()) s << "error      " << r.error.message << "\n";
  if (!r.error.compile_log.empty()) s << "compiler output:\n" << r.error.compile_log << "\n";
  if (!r.error.stderr_tail.empty()) s << "candidate output (tail):\n" << r.error.stderr_tail << "\n";
  for (const auto& w : r.warnings) s << "warning    " << w << " (KernelBench's static checker)\n";
  s << "phases_ms ";
  for (const auto& [k, v] : r.phases_ms) {
    if (k.find('.') == std::string::npos) s << " " << k << "=" << format_fixed(v, 1);  // steps inside phases: --json
  }
  s << (r.cache_hit ? "  (compile cache hit)" : "") << "\n";
  return s.str();
}

std::string render_summary(const std::vector<std::string>& labels,
                           const std::vector<common::Expected<EvalResult>>& results) {
  common::Table table({"job", "format", "status", "runtime_us", "ref_us", "speedup", "compile_ms"});
  std::map<std::string, int> counts;
  int n_failed = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (!r) {
      ++n_failed;
      table.add_row({labels[i], "-", "COULD_NOT_EVALUATE", "-", "-", "-", "-"});
      continue;
    }
    ++counts[std::string(common::to_string(r->status))];
    auto compile_ms = r->phases_ms.count("compile") ? r->phases_ms.at("compile") : 0.0;
    table.add_row({labels[i], r->format, std::string(common::to_string(r->status)),
                   r->runtime.n ? format_fixed(r->runtime_us, 1) : "-", r->ref_runtime.n ? format_fixed(r->ref_runtime_us, 1) : "-",
                   r->correct && r->speedup > 0 ? format_fixed(r->speedup, 2) + "x" : "-",
                   format_fixed(compile_ms, 0) + (r->cache_hit ? " (hit)" : "")});
  }
  std::ostringstream s;
  s << table.render();
  s << results.size() - static_cast<std::size_t>(n_failed) << " evaluated:";
  for (const auto& [k, v] : counts) s << " " << k << " " << v;
  if (n_failed) s << "; could not evaluate: " << n_failed;
  s << "\n";
  return s.str();
}

std::string render_task_info(const std::string& task_path, const TaskInfo& info) {
  std::ostringstream s;
  s << "task " << task_path << "  (device: " << info.device;
  if (info.device_info.contains("name")) s << ", " << info.device_info["name"].get<std::string>();
  s << ")\n";
  common::Table table({"role", "name", "shape", "dtype"});
  auto add = [&](const char* role, const std::vector<task::TensorSpec>& specs) {
    for (const auto& t : specs) table.add_row({role, t.name, shape_text(t.shape), t.dtype});
  };
  add("input", info.signature.inputs);
  add("param", info.signature.params);
  add("output", info.signature.outputs);
  s << table.render();
  if (!info.signature.init_inputs.empty()) {
    s << "init inputs (get_init_inputs()):";
    for (const auto& v : info.signature.init_inputs) s << " " << v;
    s << "\n";
  }
  if (info.ref_runtime.n > 0) s << "eager reference: " << spread(info.ref_runtime) << "\n";
  if (info.sol_us > 0) s << "speed of light:  " << format_fixed(info.sol_us, 1) << " us on this GPU (task manifest)\n";
  if (info.manifest) {
    s << "manifest:        level " << info.manifest->level << ", " << info.manifest->split << ", "
      << format_fixed(info.manifest->flops / 1e9, 2) << " GFLOP, " << format_fixed(info.manifest->min_bytes / 1e6, 1) << " MB\n";
  }
  return s.str();
}

}  // namespace kernelrl::eval
