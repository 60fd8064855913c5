#include "trajectory/log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/line_io.hpp"

namespace kernelrl::trajectory {

using common::make_error;
using nlohmann::json;

common::Expected<std::unique_ptr<TrajectoryLog>> TrajectoryLog::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(path.string() + ": cannot open for appending: " + std::strerror(errno));
  return std::unique_ptr<TrajectoryLog>(new TrajectoryLog(path, fd));
}

TrajectoryLog::~TrajectoryLog() {
  if (fd_ >= 0) ::close(fd_);
}

common::Fallible TrajectoryLog::append(const json& line) {
  const std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  if (!common::write_all(fd_, text)) return make_error(path_.string() + ": write failed: " + std::strerror(errno));
  return common::Ok{};
}

}  // namespace kernelrl::trajectory
