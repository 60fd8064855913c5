// ProgressBar: state under one mutex, frames built by render_progress_line, written with '\r'
// and an erase-to-end-of-line so a shorter frame leaves no tail of the previous one.
#include "common/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace kernelrl::common {

namespace {

constexpr int bar_width = 20;
constexpr auto min_redraw_interval = std::chrono::milliseconds(100);
constexpr std::size_t fallback_terminal_width = 80;
constexpr std::string_view erase_to_eol = "\x1b[K";

// Cuts a UTF-8 string after `max_code_points` code points.
std::string cut_to_width(std::string s, std::size_t max_code_points) {
  std::size_t n_points = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;  // continuation byte
    if (n_points == max_code_points) {
      s.resize(i);
      break;
    }
    ++n_points;
  }
  return s;
}

std::size_t terminal_width(std::FILE* sink) {
  winsize ws{};
  if (ioctl(fileno(sink), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return fallback_terminal_width;
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const auto total_s = static_cast<long long>(std::llround(seconds));
  const long long h = total_s / 3600;
  const long long m = (total_s / 60) % 60;
  const long long s = total_s % 60;
  char buf[48];
  if (h > 0) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", h, m, s);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", m, s);
  }
  return buf;
}

std::string render_progress_line(const ProgressSnapshot& p, std::size_t max_width) {
  std::string line(p.label);
  if (p.total > 0) {
    const std::int64_t n_done = std::clamp<std::int64_t>(p.n_done, 0, p.total);
    const auto n_filled = static_cast<int>(n_done * bar_width / p.total);
    line += " [" + std::string(n_filled, '#') + std::string(bar_width - n_filled, '-') + "] ";
    line += std::to_string(p.n_done) + "/" + std::to_string(p.total);
    line += "  " + std::to_string(n_done * 100 / p.total) + "%";
  } else {
    line += " " + std::to_string(p.n_done);
  }
  if (!p.suffix.empty()) line += "  " + std::string(p.suffix);
  if (p.finished) {
    line += "  took " + format_duration(p.elapsed_s);
  } else if (p.total > 0) {
    const double n_left = static_cast<double>(p.total - p.n_done);
    const double eta_s = p.n_done > 0 ? p.elapsed_s * n_left / static_cast<double>(p.n_done) : -1;
    line += "  ETA " + format_duration(eta_s);
  }
  if (!p.note.empty()) line += "  " + std::string(p.note);
  return cut_to_width(std::move(line), max_width);
}

bool stderr_is_tty() { return isatty(STDERR_FILENO) == 1; }

ProgressBar::ProgressBar(std::string label, std::int64_t total, bool enabled, std::FILE* sink)
    : label_(std::move(label)),
      total_(total),
      enabled_(enabled),
      sink_(sink),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {
  std::lock_guard lock(mu_);
  draw_locked(true);
}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::advance(std::int64_t n, std::string_view note) {
  std::lock_guard lock(mu_);
  if (finished_) return;
  n_done_ += n;
  if (!note.empty()) note_ = note;
  draw_locked(total_ > 0 && n_done_ >= total_);
}

void ProgressBar::set_suffix(std::string suffix) {
  std::lock_guard lock(mu_);
  suffix_ = std::move(suffix);
}

void ProgressBar::log(std::string_view line) {
  std::lock_guard lock(mu_);
  if (!enabled_ || finished_) {
    std::fprintf(sink_, "%.*s\n", static_cast<int>(line.size()), line.data());
    std::fflush(sink_);
    return;
  }
  std::fprintf(sink_, "\r%.*s%.*s\n", static_cast<int>(erase_to_eol.size()), erase_to_eol.data(),
               static_cast<int>(line.size()), line.data());
  draw_locked(true);
}

void ProgressBar::finish() {
  std::lock_guard lock(mu_);
  if (finished_) return;
  finished_ = true;
  draw_locked(true);
  if (enabled_) {
    std::fputc('\n', sink_);
    std::fflush(sink_);
  }
}

void ProgressBar::draw_locked(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < min_redraw_interval) return;
  last_draw_ = now;
  ProgressSnapshot snapshot;
  snapshot.label = label_;
  snapshot.n_done = n_done_;
  snapshot.total = total_;
  snapshot.elapsed_s = std::chrono::duration<double>(now - start_).count();
  snapshot.suffix = suffix_;
  snapshot.note = note_;
  snapshot.finished = finished_;
  // One column short of the width: writing the last column makes some terminals wrap.
  const std::string line = render_progress_line(snapshot, terminal_width(sink_) - 1);
  std::fprintf(sink_, "\r%s%.*s", line.c_str(), static_cast<int>(erase_to_eol.size()), erase_to_eol.data());
  std::fflush(sink_);
}

}  // namespace kernelrl::common
