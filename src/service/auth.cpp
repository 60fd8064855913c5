#include "service/auth.hpp"

#include <openssl/sha.h>

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
    std::istringstream words(line);
    Token token;
    words >> token.value;
    const std::string where = "--token-file: " + path.string() + ":" + std::to_string(n) + ": ";
    if (token.value.size() < kMinTokenChars) {
      return common::make_error(where + "a token of " + std::to_string(token.value.size()) +
                                " characters; use at least " + std::to_string(kMinTokenChars) +
                                " (e.g. `openssl rand -hex 32`)");
    }
    for (std::string word; words >> word;) {
      if (word != "task_source") {
        return common::make_error(where + "'" + word + "' is not a permission; a line is TOKEN [task_source]");
      }
      token.task_source = true;
    }
    auth.tokens_.push_back(std::move(token));
  }
  if (auth.tokens_.empty()) return common::make_error("--token-file: " + path.string() + " holds no token");
  return auth;
}

// The token of an "Authorization: Bearer TOKEN" header value that is one of `tokens_`, or nullptr.
// Every token is compared, with no early exit.
const TokenAuth::Token* TokenAuth::match(std::string_view header) const {
  constexpr std::string_view kBearer = "Bearer ";
  if (header.size() < kBearer.size() || header.substr(0, kBearer.size()) != kBearer) return nullptr;
  const std::string_view token = header.substr(kBearer.size());
  const Token* found = nullptr;
  for (const auto& t : tokens_) {
    if (constant_time_equal(token, t.value)) found = &t;
  }
  return found;
}

bool TokenAuth::may_send_tasks(std::string_view header) const {
  const Token* t = match(header);
  return t && t->task_source;
}

bool TokenAuth::allows(std::string_view header) const { return tokens_.empty() || match(header) != nullptr; }

std::string TokenAuth::scope(std::string_view header) const {
  if (tokens_.empty()) return "open";
  const Token* token = match(header);
  if (!token) return "";
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(token->value.data()), token->value.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "t-";
  for (int i = 0; i < 8; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

}  // namespace kernelrl::service
