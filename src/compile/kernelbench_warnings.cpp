#include "compile/kernelbench_warnings.hpp"

#include <algorithm>
#include <regex>
#include <sstream>

namespace kernelrl::compile {

namespace {

// Longer lines are read up to here: std::regex recurses per character matched, and these are
// warnings, never a verdict (a pattern hidden past it is only not reported).
constexpr std::size_t kMaxLineChars = 4096;

// Every line cut at its first `#` or `//`, as KernelBench strips comments (crudely: a `#include`
// inside a CUDA string goes too, and so it does there), and at kMaxLineChars.
std::vector<std::string> code_lines(std::string_view source) {
  std::vector<std::string> out;
  std::istringstream in{std::string(source)};
  for (std::string line; std::getline(in, line);) {
    out.push_back(line.substr(0, std::min({line.find('#'), line.find("//"), kMaxLineChars})));
  }
  return out;
}

// The first match of `patterns` (in their order) on any line, or "".
std::string first_match(const std::vector<std::string>& lines, const std::vector<std::regex>& patterns) {
  for (const auto& p : patterns) {
    for (const auto& line : lines) {
      std::smatch m;
      if (std::regex_search(line, m, p)) return m.str(0);
    }
  }
  return "";
}

// torch.nn.X where X is not a container, Parameter or init.
const std::vector<std::regex>& compute_layer() {
  static const std::vector<std::regex> p = {
      std::regex(R"(torch\.nn\.(?!(Module|parameter|Parameter|ParameterList|ParameterDict|ModuleList|ModuleDict|init)\b)\w+)")};
  return p;
}

// The high-level operators KernelBench lists (a name followed by `(`, a space or the end), then
// torch.nn.functional in its three spellings.
const std::vector<std::regex>& computation_ops() {
  static const std::vector<std::regex> p = [] {
    const char* ops[] = {
        "mm", "bmm", "matmul", "einsum", "conv1d", "conv2d", "conv3d", "conv", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d",
        "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
        "adaptive_max_pool2d", "adaptive_max_pool3d", "relu", "hardtanh", "elu", "selu", "leaky_relu", "gelu",
        "softsign", "softplus", "softmax", "log_softmax", "tanh", "sigmoid", "hardsigmoid", "silu", "mish",
        "batch_norm", "group_norm", "layer_norm", "instance_norm", "rms_norm", "normalize", "linear",
        "cross_entropy", "kl_div", "mse_loss", "huber_loss", "triplet_margin_loss", "cosine_similarity",
        "logsumexp", "clamp", "dropout"};
    std::string alternatives;
    for (const char* op : ops) alternatives += std::string(alternatives.empty() ? "" : "|") + op;
    return std::vector<std::regex>{
        std::regex(R"(\btorch\.()" + alternatives + R"()(?=\s*\(|\s|$))"),
        std::regex(R"(torch\.nn\.functional\.\w+)"), std::regex(R"(\bnn\.functional\.\w+)"),
        std::regex(R"(\bF\.(conv|linear|relu|gelu|softmax|batch_norm|layer_norm|dropout|max_pool|avg_pool))")};
  }();
  return p;
}

// Casts from float to half: CUDA intrinsics and casts, Triton, CUTLASS/CuTe, ThunderKittens, torch.
const std::vector<std::regex>& to_half() {
  static const std::vector<std::regex> p = {
      std::regex(R"(__float2half(_rn)?\s*\()"),
      std::regex(R"(\(\s*__half\s*\)\s*[\w\->\.]+)"),
      std::regex(R"(static_cast\s*<\s*(__half|half)\s*>\s*\()"),
      std::regex(R"(tl\.astype\s*\(\s*[^,]+,\s*tl\.float16\s*\))"),
      std::regex(R"(NumericConverter\s*<\s*half_t\s*,\s*float\s*>)"),
      std::regex(R"(LinearCombination\s*<\s*half_t)"),
      std::regex(R"(type_convert\s*<\s*half_t\s*>\s*\()"),
      std::regex(R"(tk::half\s*\()"),
      std::regex(R"(\.half\s*\()"),
      std::regex(R"(\.float16\s*\()"),
      std::regex(R"(\.to\s*\(\s*torch\.(float16|half)\b)"),
      std::regex(R"(\.to\s*\(\s*dtype\s*=\s*torch\.(float16|half)\b)")};
  return p;
}

}  // namespace

std::vector<std::string> kernelbench_warnings(std::string_view source, bool fp32) {
  const std::vector<std::string> code = code_lines(source);
  std::vector<std::string> out;
  if (auto m = first_match(code, compute_layer()); !m.empty()) out.push_back("pytorch_wrap: " + m);
  if (auto m = first_match(code, computation_ops()); !m.empty()) out.push_back("torch_computation_ops: " + m);
  if (fp32) {
    if (auto m = first_match(code, to_half()); !m.empty()) out.push_back("precision_downgrade: " + m);
  }
  return out;
}

}  // namespace kernelrl::compile
