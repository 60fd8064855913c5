// Block layouts and names of the ggml types (ggml.c's type_traits; gguf-py's GGML_QUANT_SIZES).
#include "weights/ggml_types.hpp"

namespace kernelrl::weights {

namespace {

struct TypeRow {
  GgmlType type;
  const char* name;
  std::int64_t block_size;
  std::int64_t type_size;
};

constexpr std::int64_t qk_k = 256;  // values per k-quant super-block

constexpr TypeRow type_rows[] = {
    {GgmlType::F32, "F32", 1, 4},
    {GgmlType::F16, "F16", 1, 2},
    {GgmlType::Q4_0, "Q4_0", 32, 2 + 16},
    {GgmlType::Q4_1, "Q4_1", 32, 2 + 2 + 16},
    {GgmlType::Q5_0, "Q5_0", 32, 2 + 4 + 16},
    {GgmlType::Q5_1, "Q5_1", 32, 2 + 2 + 4 + 16},
    {GgmlType::Q8_0, "Q8_0", 32, 2 + 32},
    {GgmlType::Q8_1, "Q8_1", 32, 4 + 4 + 32},
    {GgmlType::Q2_K, "Q2_K", qk_k, 2 + 2 + qk_k / 16 + qk_k / 4},
    {GgmlType::Q3_K, "Q3_K", qk_k, 2 + qk_k / 4 + qk_k / 8 + 12},
    {GgmlType::Q4_K, "Q4_K", qk_k, 2 + 2 + qk_k / 2 + 12},
    {GgmlType::Q5_K, "Q5_K", qk_k, 2 + 2 + qk_k / 2 + qk_k / 8 + 12},
    {GgmlType::Q6_K, "Q6_K", qk_k, 2 + qk_k / 2 + qk_k / 4 + qk_k / 16},
    {GgmlType::Q8_K, "Q8_K", qk_k, 4 + qk_k + qk_k / 8},
    {GgmlType::IQ2_XXS, "IQ2_XXS", qk_k, 2 + qk_k / 4},
    {GgmlType::IQ2_XS, "IQ2_XS", qk_k, 2 + qk_k / 4 + qk_k / 32},
    {GgmlType::IQ3_XXS, "IQ3_XXS", qk_k, 2 + qk_k / 4 + qk_k / 8},
    {GgmlType::IQ1_S, "IQ1_S", qk_k, 2 + qk_k / 8 + qk_k / 16},
    {GgmlType::IQ4_NL, "IQ4_NL", 32, 2 + 16},
    {GgmlType::IQ3_S, "IQ3_S", qk_k, 2 + qk_k / 4 + qk_k / 8 + qk_k / 32 + 4},
    {GgmlType::IQ2_S, "IQ2_S", qk_k, 2 + qk_k / 4 + qk_k / 16},
    {GgmlType::IQ4_XS, "IQ4_XS", qk_k, 2 + 2 + qk_k / 2 + qk_k / 64},
    {GgmlType::I8, "I8", 1, 1},
    {GgmlType::I16, "I16", 1, 2},
    {GgmlType::I32, "I32", 1, 4},
    {GgmlType::I64, "I64", 1, 8},
    {GgmlType::F64, "F64", 1, 8},
    {GgmlType::IQ1_M, "IQ1_M", qk_k, qk_k / 8 + qk_k / 16 + qk_k / 32},
    {GgmlType::BF16, "BF16", 1, 2},
    {GgmlType::TQ1_0, "TQ1_0", qk_k, 2 + 4 * 13},
    {GgmlType::TQ2_0, "TQ2_0", qk_k, 2 + 64},
    {GgmlType::MXFP4, "MXFP4", 32, 1 + 16},
};

const TypeRow* find_row(GgmlType type) {
  for (const auto& row : type_rows) {
    if (row.type == type) return &row;
  }
  return nullptr;
}

}  // namespace

std::optional<GgmlBlockLayout> ggml_block_layout(GgmlType type) {
  const TypeRow* row = find_row(type);
  if (row == nullptr) return std::nullopt;
  return GgmlBlockLayout{row->block_size, row->type_size};
}

std::string ggml_type_name(GgmlType type) {
  const TypeRow* row = find_row(type);
  if (row == nullptr) return "ggml type " + std::to_string(static_cast<std::uint32_t>(type));
  return row->name;
}

}  // namespace kernelrl::weights
