// The shape checks the model needs before it allocates anything: the fields of a ModelConfig that
// the transformer reads, each positive and consistent. Independent of weights::ModelConfig::validate
// so the model library links without the weights library.
#pragma once

#include "common/expected.hpp"
#include "weights/model_config.hpp"

namespace kernelrl::model {

// OK when a Transformer can be built from `config`; otherwise an error naming the field and value.
common::Fallible check_config(const weights::ModelConfig& config);

}  // namespace kernelrl::model
