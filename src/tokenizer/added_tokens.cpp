// Matching follows tokenizers' AddedVocabulary::find_matches: leftmost-longest over all tokens of
// a pass; a special token skipped because specials are off still consumes its text (as plain
// text), so no other added token is found inside it; lstrip/rstrip swallow Unicode whitespace.
#include "tokenizer/added_tokens.hpp"

#include <algorithm>

#include "tokenizer/utf8.hpp"

namespace kernelrl::tokenizer {

using common::Expected;
using common::make_error;

namespace {

// Start of the whitespace run that ends at `end` (not before `floor`).
std::size_t whitespace_start_before(std::string_view text, std::size_t floor, std::size_t end) {
  std::size_t pos = end;
  while (pos > floor) {
    std::size_t lead = pos - 1;
    while (lead > floor && (static_cast<unsigned char>(text[lead]) & 0xC0) == 0x80) --lead;
    std::size_t length = 0;
    if (!utf8::is_white_space(utf8::decode_at(text, lead, length))) break;
    pos = lead;
  }
  return pos;
}

// End of the whitespace run that starts at `begin` (not past `ceiling`).
std::size_t whitespace_end_after(std::string_view text, std::size_t begin, std::size_t ceiling) {
  std::size_t pos = begin;
  while (pos < ceiling) {
    std::size_t length = 0;
    if (!utf8::is_white_space(utf8::decode_at(text, pos, length))) break;
    pos += length;
  }
  return pos;
}

}  // namespace

Expected<AddedTokenMatcher> AddedTokenMatcher::build(std::vector<AddedToken> tokens) {
  AddedTokenMatcher m;
  m.tokens_ = std::move(tokens);
  for (std::size_t i = 0; i < m.tokens_.size(); ++i) {
    const AddedToken& t = m.tokens_[i];
    if (t.content.empty()) return make_error("added token " + std::to_string(t.id) + " has empty content");
    Pass& pass = t.normalized ? m.normalized_pass_ : m.raw_pass_;
    pass.by_first_byte[static_cast<unsigned char>(t.content[0])].push_back(i);
  }
  for (Pass* pass : {&m.raw_pass_, &m.normalized_pass_}) {
    for (auto& list : pass->by_first_byte) {
      std::stable_sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) {
        return m.tokens_[a].content.size() > m.tokens_[b].content.size();
      });
    }
  }
  return m;
}

void AddedTokenMatcher::find_in(const Pass& pass, std::string_view text, std::size_t begin, std::size_t end,
                                bool allow_special, std::vector<Segment>& out) const {
  std::size_t plain_start = begin;  // first byte not yet emitted
  std::size_t pos = begin;
  while (pos < end) {
    const auto& candidates = pass.by_first_byte[static_cast<unsigned char>(text[pos])];
    const AddedToken* hit = nullptr;
    for (std::size_t index : candidates) {
      const std::string& content = tokens_[index].content;
      if (content.size() <= end - pos && text.compare(pos, content.size(), content) == 0) {
        hit = &tokens_[index];
        break;
      }
    }
    if (hit == nullptr) {
      ++pos;
      continue;
    }
    std::size_t match_begin = pos;
    std::size_t match_end = pos + hit->content.size();
    pos = match_end;
    if (hit->special && !allow_special) continue;  // stays plain text
    if (hit->lstrip) match_begin = std::max(whitespace_start_before(text, begin, match_begin), plain_start);
    if (hit->rstrip) match_end = whitespace_end_after(text, match_end, end);
    if (plain_start < match_begin) out.push_back({plain_start, match_begin, -1});
    out.push_back({match_begin, match_end, hit->id});
    plain_start = match_end;
    pos = match_end;
  }
  if (plain_start < end) out.push_back({plain_start, end, -1});
}

void AddedTokenMatcher::segment(std::string_view text, bool allow_special, std::vector<Segment>& out) const {
  thread_local std::vector<Segment> first;
  first.clear();
  find_in(raw_pass_, text, 0, text.size(), allow_special, first);
  for (const Segment& s : first) {
    if (s.added_id >= 0) {
      out.push_back(s);
    } else {
      find_in(normalized_pass_, text, s.begin, s.end, allow_special, out);
    }
  }
}

}  // namespace kernelrl::tokenizer
