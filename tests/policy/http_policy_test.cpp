// Token ids from a server's log-probabilities: vLLM's "token_id:N" tokens become ids; plain token
// texts (or anything malformed) leave the ids unknown rather than guessed.
#include <gtest/gtest.h>

#include "policy/http_policy.hpp"

namespace kernelrl::policy {
namespace {

TEST(HttpPolicy, TokenIdsComeFromTokenIdStringsOnly) {
  auto ids = token_ids_of({{"token_id:15", -0.5}, {"token_id:0", -1.0}, {"token_id:49151", -2.0}});
  ASSERT_TRUE(ids.has_value());
  EXPECT_EQ(*ids, (std::vector<std::int64_t>{15, 0, 49151}));
  EXPECT_FALSE(token_ids_of({{"token_id:15", -0.5}, {"hello", -1.0}}).has_value());
  EXPECT_FALSE(token_ids_of({{"token_id:", -0.5}}).has_value());
  EXPECT_FALSE(token_ids_of({{"token_id:1x", -0.5}}).has_value());
}

}  // namespace
}  // namespace kernelrl::policy
