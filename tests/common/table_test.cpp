// Table::render layout: widths, numeric right-alignment, header rule, ragged rows, UTF-8.
#include "common/table.hpp"

#include <gtest/gtest.h>

namespace kernelrl::common {
namespace {

TEST(Table, AlignsNumbersRightAndTextLeft) {
  Table t({"task", "runtime_us", "speedup", "status"});
  t.add_row({"softmax", "12.5", "1.9x", "ok"});
  t.add_row({"matmul_big", "1024", "0.75x", "WRONG_OUTPUT"});
  t.add_row({"relu", "-", "-", "COMPILE_ERROR"});
  EXPECT_EQ(t.render(),
            "task        runtime_us  speedup  status\n"
            "----------  ----------  -------  -------------\n"
            "softmax           12.5     1.9x  ok\n"
            "matmul_big        1024    0.75x  WRONG_OUTPUT\n"
            "relu                 -        -  COMPILE_ERROR\n");
}

TEST(Table, OneTextCellMakesTheColumnLeftAligned) {
  Table t({"n", "value"});
  t.add_row({"1", "10"});
  t.add_row({"22", "n/a"});
  EXPECT_EQ(t.render(),
            " n  value\n"
            "--  -----\n"
            " 1  10\n"
            "22  n/a\n");
}

TEST(Table, RaggedRowsArePaddedOrWidened) {
  Table t({"a", "b"});
  t.add_row({"x"});
  t.add_row({"y", "z", "extra"});
  EXPECT_EQ(t.render(),
            "a  b\n"
            "-  -  -----\n"
            "x\n"
            "y  z  extra\n");
}

TEST(Table, HeaderOnly) {
  Table t({"name", "ms"});
  EXPECT_EQ(t.render(), "name  ms\n----  --\n");
}

TEST(Table, WidthCountsCodePointsNotBytes) {
  Table t({"unit", "x"});
  t.add_row({"µs", "1"});
  EXPECT_EQ(display_width("µs"), 2u);
  EXPECT_EQ(t.render(),
            "unit  x\n"
            "----  -\n"
            "µs    1\n");
}

TEST(Table, LooksNumeric) {
  for (const char* yes : {"0", "42", "-1.5", "+3", ".5", "7.", "1e-3", "2.5E+10", "24%", "1.9x", "850us",
                          "3.2ms"}) {
    EXPECT_TRUE(looks_numeric(yes)) << yes;
  }
  for (const char* no : {"", "-", "abc", "v1", "1.2.3", "12 ms", "0x1F", "nan", "1.5 seconds", "ok"}) {
    EXPECT_FALSE(looks_numeric(no)) << no;
  }
}

}  // namespace
}  // namespace kernelrl::common
