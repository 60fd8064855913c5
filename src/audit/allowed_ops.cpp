#include "audit/allowed_ops.hpp"

namespace kernelrl::audit {

const std::set<std::string, std::less<>>& allowed_ops() {
  static const std::set<std::string, std::less<>> ops{
      // allocation and constant fills
      "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like", "ones",
      "ones_like", "full", "full_like", "new_zeros", "new_ones", "new_full", "fill_", "zero_", "scalar_tensor",
      "lift_fresh", "lift_fresh_copy", "resize_",
      // views and reshapes
      "view", "_unsafe_view", "_reshape_alias", "reshape", "as_strided", "alias", "detach", "t", "transpose",
      "permute", "expand", "expand_as", "squeeze", "unsqueeze", "select", "slice", "split", "split_with_sizes",
      "unbind", "narrow", "chunk", "flatten", "unflatten", "view_as", "movedim", "swapaxes", "swapdims", "diagonal",
      "unfold", "set_",
      // copies, dtype and device moves, reading a scalar
      "clone", "copy_", "_to_copy", "to", "contiguous", "_copy_from", "_copy_from_and_resize", "_local_scalar_dense",
      "item", "is_nonzero"};
  return ops;
}

bool torch_op_allowed(std::string_view schema_name) {
  constexpr std::string_view prefix = "aten::";
  if (!schema_name.starts_with(prefix)) return false;
  return allowed_ops().contains(schema_name.substr(prefix.size()));
}

}  // namespace kernelrl::audit
