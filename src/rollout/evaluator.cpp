#include "rollout/evaluator.hpp"

namespace kernelrl::rollout {

// The engine's default options and rule set (a job's own override them, and the rollout gives
// none), its device and the GPU's name: a reward measured under other ones is another reward.
nlohmann::json EngineEvaluator::settings() const {
  const auto& config = engine_.config();
  const auto& info = engine_.device_info();
  return {{"evaluator", "engine"},
          {"device", engine_.device()},
          {"gpu", info.is_object() && info.contains("name") ? info["name"] : nlohmann::json(nullptr)},
          {"rules", std::string(common::to_string(config.rules))},
          {"options", nlohmann::json(config.options)}};
}

}  // namespace kernelrl::rollout
