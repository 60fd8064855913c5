// Response parsing: thoughts from tags or a reasoning field, the last block of the right language,
// the summary after it, and clear errors for malformed, empty and truncated responses.
#include "rollout/response_parser.hpp"

#include <gtest/gtest.h>

namespace kernelrl::rollout {
namespace {

using common::Format;

TEST(ResponseParser, TakesTheLastBlockOfTheLanguageAndTheSummaryAfterIt) {
  const char* text =
      "<think>try tiling</think>\nFirst a sketch:\n```cuda\nold();\n```\nThen the real one:\n"
      "```cuda\n__global__ void k() {}\n```\nTiled the loop and fused the bias.\n";
  ParsedResponse r = parse_response(text, "", Format::NATIVE);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.thoughts, "try tiling");
  EXPECT_EQ(r.code, "__global__ void k() {}\n");
  EXPECT_EQ(r.summary, "Tiled the loop and fused the bias.");
}

TEST(ResponseParser, ReasoningFieldAndOtherLanguagesAreHandled) {
  ParsedResponse r = parse_response("```python\nprint(1)\n```\n```cpp\nint x;\n```\ndone", "thinking...", Format::HOST);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.thoughts, "thinking...");
  EXPECT_EQ(r.code, "int x;\n");
  EXPECT_EQ(r.summary, "done");
  ParsedResponse py = parse_response("```Python\nclass ModelNew: pass\n```", "", Format::KERNELBENCH);
  ASSERT_TRUE(py.ok);
  EXPECT_EQ(py.summary, "");
}

TEST(ResponseParser, MalformedResponsesSayWhatIsWrong) {
  EXPECT_NE(parse_response("no code here", "", Format::NATIVE).error.find("```cuda"), std::string::npos);
  EXPECT_NE(parse_response("```cuda\nint x;\n", "", Format::NATIVE).error.find("not closed"), std::string::npos);
  EXPECT_NE(parse_response("<think>still thinking", "", Format::NATIVE).error.find("<think>"), std::string::npos);
  EXPECT_NE(parse_response("```cuda\n\n```", "", Format::NATIVE).error.find("empty"), std::string::npos);
  EXPECT_FALSE(parse_response("", "", Format::NATIVE).ok);
  EXPECT_FALSE(parse_response("```python\nx\n```", "", Format::NATIVE).ok);  // wrong language
}

// A reasoning model whose chat template opens <think> in the prompt (QwQ, R1 distills), served
// without a reasoning parser, answers with a closing tag only: what comes before it is thoughts.
TEST(ResponseParser, AClosingTagWithoutAnOpeningOneEndsTheThoughts) {
  const char* text =
      "The rows are independent, so a first draft:\n```cuda\ndraft();\n```\nNo, better to fuse the passes.\n"
      "</think>\n\n```cuda\nfinal();\n```\nFused the two passes.\n";
  ParsedResponse r = parse_response(text, "", Format::NATIVE);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.code, "final();\n");
  EXPECT_EQ(r.summary, "Fused the two passes.");
  EXPECT_NE(r.thoughts.find("draft();"), std::string::npos) << r.thoughts;
  EXPECT_NE(r.thoughts.find("better to fuse"), std::string::npos) << r.thoughts;
  EXPECT_EQ(r.thoughts.find("</think>"), std::string::npos);

  // Code drafted only in the thoughts is never the candidate, nor the thoughts the summary.
  ParsedResponse drafted = parse_response("A draft:\n```cuda\ndraft();\n```\nhmm\n</think>\nI could not finish.", "",
                                          Format::NATIVE);
  EXPECT_FALSE(drafted.ok);
  EXPECT_NE(drafted.error.find("no ```cuda code block"), std::string::npos) << drafted.error;
  EXPECT_NE(drafted.thoughts.find("draft();"), std::string::npos);
  ParsedResponse lenient = parse_response("```c\ndraft();\n```\n</think>\nno code", "", Format::NATIVE, /*lenient=*/true);
  EXPECT_FALSE(lenient.ok);

  // A separate reasoning field and the closing tag add up; an opening tag still works as before.
  ParsedResponse both = parse_response("more thoughts</think>```cuda\nk();\n```", "field thoughts", Format::NATIVE);
  ASSERT_TRUE(both.ok) << both.error;
  EXPECT_EQ(both.thoughts, "field thoughts\nmore thoughts");
  EXPECT_EQ(both.code, "k();\n");
}

TEST(ResponseParser, TruncatedThoughtsAreKeptForTheRecord) {
  ParsedResponse r = parse_response("<think>step 1, step 2", "", Format::NATIVE);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.thoughts, "step 1, step 2");
}

}  // namespace
}  // namespace kernelrl::rollout

namespace kernelrl::rollout {
namespace {

TEST(ResponseParser, LenientModeTakesAnyLanguageAndACutOffLastBlock) {
  const std::string c_block = "Here:\n```c\n__global__ void k() {}\n```\nDone.";
  EXPECT_FALSE(parse_response(c_block, "", common::Format::NATIVE).ok);
  auto any = parse_response(c_block, "", common::Format::NATIVE, /*lenient=*/true);
  ASSERT_TRUE(any.ok) << any.error;
  EXPECT_EQ(any.code, "__global__ void k() {}\n");
  EXPECT_EQ(any.summary, "Done.");
  const std::string cut = "```cuda\n__global__ void k(float* x) {\n  x[0] = 1";
  EXPECT_FALSE(parse_response(cut, "", common::Format::NATIVE).ok);
  auto open = parse_response(cut, "", common::Format::NATIVE, /*lenient=*/true);
  ASSERT_TRUE(open.ok) << open.error;
  EXPECT_EQ(open.code, "__global__ void k(float* x) {\n  x[0] = 1");
  EXPECT_FALSE(parse_response("no code at all", "", common::Format::NATIVE, true).ok);
}

}  // namespace
}  // namespace kernelrl::rollout
