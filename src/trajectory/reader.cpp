// Both readers feed each line to one Merger, which keeps full records by (task, trajectory, turn)
// and patches them with update records.
#include "trajectory/reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"
#include "common/json_lines.hpp"
#include "common/line_io.hpp"

namespace kernelrl::trajectory {

namespace fs = std::filesystem;
using common::Expected;
using common::make_error;
using nlohmann::json;

namespace {

class Merger {
 public:
  Merger(TrajectoryFile& file, Detail detail) : file_(file), detail_(detail) {}

  common::Fallible add(const json& line, const std::string& where) {
    if (is_update(line)) {
      auto update = read_turn_update(line);
      if (!update) return make_error(where + ": " + update.error().message);
      auto found = index_of_.find({update->task, update->ref.trajectory, update->ref.turn});
      if (found == index_of_.end()) {
        return make_error(where + ": update for a turn with no earlier record (task " + update->task + ", trajectory " +
                          std::to_string(update->ref.trajectory) + ", turn " + std::to_string(update->ref.turn) + ")");
      }
      apply(*update, file_.records[found->second]);
      return common::Ok{};
    }
    auto record = read_turn_record(line);
    if (!record) return make_error(where + ": " + record.error().message);
    if (detail_ == Detail::WITHOUT_TEXT) {
      record->messages.clear();
      record->response = {};
    }
    const Key key{record->task, record->trajectory, record->turn};
    if (auto found = index_of_.find(key); found != index_of_.end()) {
      file_.warnings.push_back(where + ": repeats an earlier record for the same turn; keeping this one");
      file_.records[found->second] = std::move(*record);
      return common::Ok{};
    }
    index_of_.emplace(key, file_.records.size());
    file_.records.push_back(std::move(*record));
    return common::Ok{};
  }

 private:
  using Key = std::tuple<std::string, int, int>;  // (task, trajectory, turn)
  TrajectoryFile& file_;
  Detail detail_;
  std::map<Key, std::size_t> index_of_;  // where each turn's record sits in file_.records
};

common::Fallible end_last_line(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  const bool written = fd >= 0 && common::write_all(fd, "\n");
  if (fd >= 0) ::close(fd);
  if (!written) return make_error(path.string() + ": cannot end its last line: " + std::strerror(errno));
  return common::Ok{};
}

}  // namespace

fs::path trajectory_file_path(const fs::path& run_dir_or_jsonl) {
  std::error_code ec;
  return fs::is_directory(run_dir_or_jsonl, ec) ? run_dir_or_jsonl / kFileName : run_dir_or_jsonl;
}

Expected<TrajectoryFile> read_trajectory_file(const fs::path& path, Detail detail) {
  TrajectoryFile file;
  file.path = path;
  Merger merger(file, detail);
  auto read = common::for_each_json_line<json>(
      path, "a trajectories file", [&](const json& j, const std::string& where) { return merger.add(j, where); },
      file.warnings);
  if (!read) return read.error();
  return file;
}

Expected<TrajectoryFile> load_and_repair(const fs::path& path) {
  TrajectoryFile file;
  file.path = path;
  std::error_code ec;
  if (!fs::exists(path, ec)) return file;
  auto text = common::read_file(path, 16ull << 30);
  if (!text) return text.error();
  Merger merger(file, Detail::FULL);
  std::size_t pos = 0, line_no = 1;
  for (; pos < text->size(); ++line_no) {
    const std::size_t eol = text->find('\n', pos);
    const bool whole = eol != std::string::npos;
    const std::string_view line(text->data() + pos, (whole ? eol : text->size()) - pos);
    const std::string where = path.string() + ":" + std::to_string(line_no);
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    const bool parsed = !j.is_discarded() && j.is_object();
    if (!whole) {  // the last line lost its newline: a kill mid-write
      if (parsed) {
        if (auto added = merger.add(j, where); !added) return added.error();
        if (auto ended = end_last_line(path); !ended) return ended.error();
      } else {
        fs::resize_file(path, pos, ec);
        if (ec) return make_error(path.string() + ": cannot cut off its partial last line: " + ec.message());
        file.dropped_partial_line = true;
      }
      break;
    }
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
      if (!parsed) return make_error(where + ": not a JSON object");
      if (auto added = merger.add(j, where); !added) return added.error();
    }
    pos = eol + 1;
  }
  return file;
}

}  // namespace kernelrl::trajectory
