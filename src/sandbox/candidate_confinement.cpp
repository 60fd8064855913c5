#include "sandbox/candidate_confinement.hpp"

#include "sandbox/confinement.hpp"
#include "sandbox/syscall_filter.hpp"

namespace kernelrl::sandbox {

nlohmann::json confine_candidate_process() {
  nlohmann::json isolation;
  auto limited = limit_file_size(true);
  isolation["file_size_limit"] = static_cast<bool>(limited);
  if (!limited) isolation["file_size_limit_error"] = limited.error().message;
  auto confined = confine_writes(candidate_writable_roots());
  isolation["write_confinement"] = static_cast<bool>(confined);
  if (!confined) isolation["write_confinement_error"] = confined.error().message;
  auto installed = install_syscall_filter();
  isolation["syscall_filter"] = static_cast<bool>(installed);
  if (!installed) isolation["syscall_filter_error"] = installed.error().message;
  return isolation;
}

}  // namespace kernelrl::sandbox
