// Plain-text tables for the terminal (eval summaries, bench results): columns sized to their
// widest cell, numbers right-aligned so digits line up, a dashed rule under the header.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernelrl::common {

class Table {
 public:
  explicit Table(std::vector<std::string> headers);

  // Appends a row. Missing cells are blank; extra cells add columns with blank headers.
  void add_row(std::vector<std::string> cells);

  // The table, one '\n'-terminated line per row, columns two spaces apart, no trailing blanks.
  // A column is right-aligned when every non-blank cell below the header looks like a number
  // ("12", "-0.5", "1e-3", "24%", "1.9x", "3.2ms"); "-" and blanks do not count against it.
  // Widths count UTF-8 code points, so "µs" is two wide.
  std::string render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// True for a decimal number with an optional sign, exponent and short unit suffix (up to 3
// letters or '%'), e.g. "42", "-1.5e3", "24%", "2.1x", "850us". Used for column alignment.
bool looks_numeric(std::string_view cell);

// Code points in a UTF-8 string (bytes that are not continuation bytes).
std::size_t display_width(std::string_view s);

}  // namespace kernelrl::common
