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
  // One token per line, optionally followed by `task_source` (the permission to send tasks as
  // text). No tokens: every request is allowed (the caller warns). An Error names the file and line
  // (unreadable, no token in it, a token shorter than 16 characters, an unknown permission).
  static common::Expected<TokenAuth> from_file(const std::filesystem::path& path);
  static TokenAuth open() { return TokenAuth(); }

  bool enabled() const { return !tokens_.empty(); }
  // Whether the request's token is marked `task_source` in the file (TOKEN task_source): its holder
  // may send tasks as text even where the service does not take them from every token.
  bool may_send_tasks(std::string_view authorization_header) const;
  // Whether an "Authorization" header value ("Bearer TOKEN") carries one of the tokens. Its time
  // depends only on the lengths involved, never on where a wrong token first differs.
  bool allows(std::string_view authorization_header) const;
  // Whose request this is, for keys a token's holder owns (idempotency keys): "t-" and 16 hex digits
  // of the SHA-256 of its token ("open" without tokens; "" for a header allows() refuses). The token
  // itself is never stored.
  std::string scope(std::string_view authorization_header) const;

 private:
  struct Token {
    std::string value;
    bool task_source = false;
  };
  const Token* match(std::string_view authorization_header) const;

  std::vector<Token> tokens_;
};

// Equal contents, in time that depends only on the lengths.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace kernelrl::service
