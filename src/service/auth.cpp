#include "service/auth.hpp"

#include <algorithm>
#include <sstream>

#include "common/fs.hpp"

namespace kernelrl::service {

namespace {

constexpr std::size_t kMinTokenChars = 16;

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

}  // namespace

bool constant_time_equal(std::string_view a, std::string_view b) {
  // Compare over the longer length so neither content nor the first difference shows in the time.
  const std::size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

common::Expected<TokenAuth> TokenAuth::from_file(const std::filesystem::path& path) {
  auto text = common::read_file(path, 1u << 20);
  if (!text) return common::make_error("--token-file: " + text.error().message);
  TokenAuth auth;
  std::istringstream lines(*text);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    line = trimmed(line);
    if (line.empty() || line[0] == '#') continue;
    if (line.size() < kMinTokenChars) {
      return common::make_error("--token-file: " + path.string() + ":" + std::to_string(n) + ": a token of " +
                                std::to_string(line.size()) + " characters; use at least " +
                                std::to_string(kMinTokenChars) + " (e.g. `openssl rand -hex 32`)");
    }
    auth.tokens_.push_back(line);
  }
  if (auth.tokens_.empty()) return common::make_error("--token-file: " + path.string() + " holds no token");
  return auth;
}

bool TokenAuth::allows(std::string_view header) const {
  if (tokens_.empty()) return true;
  constexpr std::string_view kBearer = "Bearer ";
  if (header.size() < kBearer.size() || header.substr(0, kBearer.size()) != kBearer) return false;
  const std::string_view token = header.substr(kBearer.size());
  bool ok = false;
  for (const auto& t : tokens_) ok |= constant_time_equal(token, t);  // every token compared, no early exit
  return ok;
}

}  // namespace kernelrl::service
