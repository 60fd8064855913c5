// JSON-lines over file descriptors (the worker's pipes and the child's report pipe): write a
// whole line despite short writes and EINTR; read one line at a time through a caller's buffer.
#pragma once

#include <string>
#include <string_view>

namespace kernelrl::common {

// Writes all of `data`; false when the other end is gone.
bool write_all(int fd, std::string_view data);

// Reads until a '\n' is in `buffer`, moves that line (without '\n') into `line`. False at EOF or
// on an error. `buffer` keeps what was read past the line.
bool read_line(int fd, std::string& buffer, std::string& line);

}  // namespace kernelrl::common
