#include "common/report_mac.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <array>
#include <cstdio>

namespace kernelrl::common {

namespace {

constexpr std::size_t kKeyBytes = 32;
constexpr const char* kPrefix = "{\"mac\":\"";
constexpr const char* kMiddle = "\",\"line\":";

std::string hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return out;
}

// HMAC-SHA256 of "SEQ\n" + raw under the key's bytes, as hex; empty when the key is not 64 hex digits.
std::string mac_hex(const std::string& key_hex, std::uint64_t seq, const std::string& raw) {
  if (key_hex.size() != 2 * kKeyBytes) return {};
  std::array<unsigned char, kKeyBytes> key{};
  for (std::size_t i = 0; i < kKeyBytes; ++i) {
    unsigned value = 0;
    if (std::sscanf(key_hex.c_str() + 2 * i, "%2x", &value) != 1) return {};
    key[i] = static_cast<unsigned char>(value);
  }
  const std::string message = std::to_string(seq) + "\n" + raw;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
            message.size(), digest, &n)) {
    return {};
  }
  return hex(digest, n);
}

}  // namespace

std::string new_report_key() {
  std::array<unsigned char, kKeyBytes> key{};
  if (::getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size())) return {};
  return hex(key.data(), key.size());
}

std::string signed_line(const std::string& key_hex, std::uint64_t seq, const std::string& raw) {
  return kPrefix + mac_hex(key_hex, seq, raw) + kMiddle + raw + "}";
}

std::optional<std::string> verified_line(const std::string& key_hex, std::uint64_t seq, const std::string& line) {
  const std::string prefix = kPrefix, middle = kMiddle;
  const std::size_t mac_chars = 64;
  if (line.size() < prefix.size() + mac_chars + middle.size() + 1 || line.compare(0, prefix.size(), prefix) != 0 ||
      line.compare(prefix.size() + mac_chars, middle.size(), middle) != 0 || line.back() != '}') {
    return std::nullopt;
  }
  const std::string given = line.substr(prefix.size(), mac_chars);
  std::string raw = line.substr(prefix.size() + mac_chars + middle.size());
  raw.pop_back();
  const std::string expected = mac_hex(key_hex, seq, raw);
  if (expected.size() != given.size() || CRYPTO_memcmp(expected.data(), given.data(), given.size()) != 0) {
    return std::nullopt;
  }
  return raw;
}

}  // namespace kernelrl::common
