#include "task/signature.hpp"

namespace kernelrl::task {

namespace {
nlohmann::json spec_json(const TensorSpec& t) { return {{"name", t.name}, {"shape", t.shape}, {"dtype", t.dtype}}; }
TensorSpec spec_from(const nlohmann::json& j) {
  return {j.at("name").get<std::string>(), j.at("shape").get<std::vector<std::int64_t>>(),
          j.at("dtype").get<std::string>()};
}
nlohmann::json specs_json(const std::vector<TensorSpec>& v) {
  auto a = nlohmann::json::array();
  for (const auto& t : v) a.push_back(spec_json(t));
  return a;
}
std::vector<TensorSpec> specs_from(const nlohmann::json& j) {
  std::vector<TensorSpec> v;
  for (const auto& e : j) v.push_back(spec_from(e));
  return v;
}
}  // namespace

nlohmann::json to_json(const Signature& s) {
  return {{"inputs", specs_json(s.inputs)},
          {"params", specs_json(s.params)},
          {"outputs", specs_json(s.outputs)},
          {"init_inputs", s.init_inputs}};
}

Signature signature_from_json(const nlohmann::json& j) {
  Signature s;
  s.inputs = specs_from(j.at("inputs"));
  s.params = specs_from(j.at("params"));
  s.outputs = specs_from(j.at("outputs"));
  s.init_inputs = j.value("init_inputs", std::vector<std::string>{});
  return s;
}

}  // namespace kernelrl::task
