// Table::render: measure every column, decide its alignment, then pad cell by cell.
#include "common/table.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace kernelrl::common {

namespace {

constexpr std::string_view column_gap = "  ";
constexpr std::size_t max_suffix_chars = 3;

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Blank and "-" cells say nothing about a column's kind.
bool is_neutral(std::string_view cell) { return cell.empty() || cell == "-"; }

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

bool looks_numeric(std::string_view cell) {
  std::size_t i = 0;
  const std::size_t n = cell.size();
  if (i < n && (cell[i] == '+' || cell[i] == '-')) ++i;
  std::size_t n_digits = 0;
  while (i < n && is_digit(cell[i])) ++i, ++n_digits;
  if (i < n && cell[i] == '.') {
    ++i;
    while (i < n && is_digit(cell[i])) ++i, ++n_digits;
  }
  if (n_digits == 0) return false;
  if (i < n && (cell[i] == 'e' || cell[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < n && (cell[j] == '+' || cell[j] == '-')) ++j;
    if (j < n && is_digit(cell[j])) {
      while (j < n && is_digit(cell[j])) ++j;
      i = j;
    }
  }
  const std::size_t suffix_chars = n - i;
  if (suffix_chars > max_suffix_chars) return false;
  for (; i < n; ++i) {
    if (!std::isalpha(static_cast<unsigned char>(cell[i])) && cell[i] != '%') return false;
  }
  return true;
}

std::size_t display_width(std::string_view s) {
  auto starts_code_point = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; };
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), starts_code_point));
}

Table::Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() > headers_.size()) headers_.resize(cells.size());
  rows_.push_back(std::move(cells));
}

std::string Table::render() const {
  const std::size_t n_columns = headers_.size();
  std::vector<std::size_t> widths(n_columns, 0);
  std::vector<bool> right_aligned(n_columns, false);
  for (std::size_t c = 0; c < n_columns; ++c) {
    widths[c] = display_width(headers_[c]);
    bool any_number = false;
    bool all_numbers = true;
    for (const auto& row : rows_) {
      if (c >= row.size()) continue;
      widths[c] = std::max(widths[c], display_width(row[c]));
      if (is_neutral(row[c])) continue;
      if (looks_numeric(row[c])) {
        any_number = true;
      } else {
        all_numbers = false;
      }
    }
    right_aligned[c] = any_number && all_numbers;
  }

  auto render_line = [&](auto cell_at) {
    std::string line;
    for (std::size_t c = 0; c < n_columns; ++c) {
      if (c > 0) line += column_gap;
      const std::string_view cell = cell_at(c);
      const std::string padding(widths[c] - display_width(cell), ' ');
      line += right_aligned[c] ? padding + std::string(cell) : std::string(cell) + padding;
    }
    return std::string(trim_right(line)) + "\n";
  };

  std::string out = render_line([&](std::size_t c) { return std::string_view(headers_[c]); });
  std::vector<std::string> rules;
  for (std::size_t w : widths) rules.emplace_back(w, '-');
  out += render_line([&](std::size_t c) { return std::string_view(rules[c]); });
  for (const auto& row : rows_) {
    out += render_line([&](std::size_t c) { return c < row.size() ? std::string_view(row[c]) : ""; });
  }
  return out;
}

}  // namespace kernelrl::common
