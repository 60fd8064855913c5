#include "rollout/trajectory_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/fs.hpp"
#include "common/line_io.hpp"

namespace kernelrl::rollout {

namespace fs = std::filesystem;
using common::make_error;
using nlohmann::json;

namespace {

common::Fallible end_last_line(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  const bool written = fd >= 0 && common::write_all(fd, "\n");
  if (fd >= 0) ::close(fd);
  if (!written) return make_error(path.string() + ": cannot end its last line: " + std::strerror(errno));
  return common::Ok{};
}

}  // namespace

common::Expected<LoadedLog> load_and_repair(const fs::path& path) {
  LoadedLog log;
  std::error_code ec;
  if (!fs::exists(path, ec)) return log;
  auto text = common::read_file(path, 16ull << 30);
  if (!text) return text.error();
  std::size_t pos = 0, line_no = 1;
  for (; pos < text->size(); ++line_no) {
    const std::size_t eol = text->find('\n', pos);
    const bool whole = eol != std::string::npos;
    const std::string_view line(text->data() + pos, (whole ? eol : text->size()) - pos);
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    const bool parsed = !j.is_discarded() && j.is_object();
    if (!whole) {  // the last line lost its newline: a kill mid-write
      if (parsed) {
        log.records.push_back(std::move(j));
        if (auto ended = end_last_line(path); !ended) return ended.error();
      } else {
        fs::resize_file(path, pos, ec);
        if (ec) return make_error(path.string() + ": cannot cut off its partial last line: " + ec.message());
        log.dropped_partial_line = true;
      }
      break;
    }
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
      if (!parsed) return make_error(path.string() + ":" + std::to_string(line_no) + ": not a JSON object");
      log.records.push_back(std::move(j));
    }
    pos = eol + 1;
  }
  return log;
}

common::Expected<std::unique_ptr<TrajectoryLog>> TrajectoryLog::open(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(path.string() + ": cannot open for appending: " + std::strerror(errno));
  return std::unique_ptr<TrajectoryLog>(new TrajectoryLog(path, fd));
}

TrajectoryLog::~TrajectoryLog() {
  if (fd_ >= 0) ::close(fd_);
}

common::Fallible TrajectoryLog::append(const json& record) {
  const std::string line = record.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  if (!common::write_all(fd_, line)) return make_error(path_.string() + ": write failed: " + std::strerror(errno));
  return common::Ok{};
}

}  // namespace kernelrl::rollout
