#include "eval/call_evidence.hpp"

#include <algorithm>

namespace kernelrl::eval {

namespace {

constexpr std::size_t kMaxNames = 8;

void add_names(std::vector<std::string>& to, const nlohmann::json& names) {
  if (!names.is_array()) return;
  for (const auto& n : names) {
    if (to.size() >= kMaxNames) return;
    if (n.is_string() && std::find(to.begin(), to.end(), n.get<std::string>()) == to.end()) to.push_back(n);
  }
}

std::int64_t count(const nlohmann::json& o, const char* key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

}  // namespace

void CallEvidence::add(const nlohmann::json& record) {
  ++n_calls_;
  if (!record.is_object()) return;
  ++n_records_;
  const auto ops = record.find("ops");
  if (ops != record.end() && ops->is_object()) {
    ++n_op_records_;
    ops_intact_ = ops_intact_ && ops->value("intact", false);
    const auto refused = ops->find("refused");
    if (refused != ops->end() && refused->is_array() && !refused->empty()) {
      ++n_with_refused_ops_;
      add_names(refused_ops_, *refused);
    }
  }
  const auto launches = record.find("launches");
  if (launches == record.end() || !launches->is_object()) return;
  ++n_launch_records_;
  launches_intact_ = launches_intact_ && launches->value("audit_intact", false);
  // A graph launched replays kernels judged when they were captured or added (launch_audit.hpp):
  // foreign ones were counted then, so a replay with no foreign kernel ran the candidate's. An
  // own launch the driver refused ran nothing.
  const std::int64_t own_ran = count(*launches, "n_own") - count(*launches, "n_own_failed");
  if (own_ran > 0 || count(*launches, "n_graph_launches") > 0) ++n_with_own_kernels_;
  if (count(*launches, "n_foreign") + count(*launches, "n_foreign_between_calls") > 0) {
    ++n_with_foreign_kernels_;
    add_names(foreign_kernels_, launches->value("foreign_kernels", nlohmann::json()));
  }
}

nlohmann::json CallEvidence::to_json() const {
  nlohmann::json j = {{"calls", n_calls_}, {"records", n_records_}};
  if (n_op_records_ > 0 && n_op_records_ == n_records_) {
    j["ops_intact"] = ops_intact_;
    j["with_refused_ops"] = n_with_refused_ops_;
    j["refused_ops"] = refused_ops_;
  }
  if (n_launch_records_ > 0 && n_launch_records_ == n_records_) {
    j["launches_intact"] = launches_intact_;
    j["with_own_kernels"] = n_with_own_kernels_;
    j["without_own_kernels"] = n_launch_records_ - n_with_own_kernels_;
    j["with_foreign_kernels"] = n_with_foreign_kernels_;
    j["foreign_kernels"] = foreign_kernels_;
  }
  return j;
}

}  // namespace kernelrl::eval
