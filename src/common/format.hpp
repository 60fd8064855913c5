// Numbers as text, the one way tables, reports and messages print them.
#pragma once

#include <string>

namespace kernelrl::common {

// `value` with `decimals` digits after the point (printf's %.*f): (1.2345, 2) -> "1.23".
std::string format_fixed(double value, int decimals);

}  // namespace kernelrl::common
