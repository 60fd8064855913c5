// Bearer-token authentication of the service's HTTP front: tokens from a file (one per line, blank
// lines and # comments ignored), compared in constant time so response timing does not reveal how
// much of a guessed token was right.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::service {

class TokenAuth {
 public:
  // No tokens: every request is allowed (the caller warns). An Error names the file (unreadable,
  // no token in it, a token shorter than 16 characters).
  static common::Expected<TokenAuth> from_file(const std::filesystem::path& path);
  static TokenAuth open() { return TokenAuth(); }

  bool enabled() const { return !tokens_.empty(); }
  // Whether an "Authorization" header value ("Bearer TOKEN") carries one of the tokens. Its time
  // depends only on the lengths involved, never on where a wrong token first differs.
  bool allows(std::string_view authorization_header) const;

 private:
  std::vector<std::string> tokens_;
};

// Equal contents, in time that depends only on the lengths.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace kernelrl::service
