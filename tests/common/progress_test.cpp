// ProgressBar: the frame layout, ETA arithmetic, throttled redraws, silence when disabled and
// correct counts under concurrent advance().
#include "common/progress.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace kernelrl::common {
namespace {

std::string read_all(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

TEST(Progress, FrameLayout) {
  ProgressSnapshot p;
  p.label = "eval";
  p.n_done = 12;
  p.total = 50;
  p.elapsed_s = 41.0 * 12 / 38;  // 38 left at 12 per that many seconds: 41 s to go
  p.suffix = "ok 9";
  p.note = "softmax_rows";
  EXPECT_EQ(render_progress_line(p, 200),
            "eval [####----------------] 12/50  24%  ok 9  ETA 0:41  softmax_rows");
}

TEST(Progress, NothingDoneYetHasNoEta) {
  ProgressSnapshot p;
  p.label = "eval";
  p.total = 8;
  EXPECT_EQ(render_progress_line(p, 200), "eval [--------------------] 0/8  0%  ETA --:--");
}

TEST(Progress, FinishedShowsTotalTime) {
  ProgressSnapshot p;
  p.label = "eval";
  p.n_done = 8;
  p.total = 8;
  p.elapsed_s = 3725;
  p.finished = true;
  EXPECT_EQ(render_progress_line(p, 200), "eval [####################] 8/8  100%  took 1:02:05");
}

TEST(Progress, UnknownTotalShowsCountOnly) {
  ProgressSnapshot p;
  p.label = "rollout";
  p.n_done = 17;
  p.suffix = "ok 3";
  EXPECT_EQ(render_progress_line(p, 200), "rollout 17  ok 3");
}

TEST(Progress, LineIsCutToWidth) {
  ProgressSnapshot p;
  p.label = "eval";
  p.n_done = 1;
  p.total = 2;
  p.note = "a very long note about the task µµµµ";
  const std::string line = render_progress_line(p, 10);
  EXPECT_EQ(line, "eval [####");
  p.label = "µµµµµµµµµµµµ";
  EXPECT_EQ(render_progress_line(p, 3), "µµµ");
}

TEST(Progress, FormatDuration) {
  EXPECT_EQ(format_duration(0), "0:00");
  EXPECT_EQ(format_duration(41.4), "0:41");
  EXPECT_EQ(format_duration(725), "12:05");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(-1), "--:--");
}

TEST(Progress, DisabledPrintsNothing) {
  std::FILE* sink = std::tmpfile();
  ASSERT_NE(sink, nullptr);
  {
    ProgressBar bar("eval", 3, false, sink);
    bar.advance();
    bar.set_suffix("ok 1");
    bar.advance(2, "note");
    bar.finish();
  }
  EXPECT_EQ(read_all(sink), "");
  std::fclose(sink);
}

TEST(Progress, DisabledStillPassesLogLinesThrough) {
  std::FILE* sink = std::tmpfile();
  ASSERT_NE(sink, nullptr);
  {
    ProgressBar bar("eval", 3, false, sink);
    bar.log("task 1 failed: WRONG_OUTPUT");
  }
  EXPECT_EQ(read_all(sink), "task 1 failed: WRONG_OUTPUT\n");
  std::fclose(sink);
}

TEST(Progress, ConcurrentAdvancesAreCountedAndRedrawsThrottled) {
  std::FILE* sink = std::tmpfile();
  ASSERT_NE(sink, nullptr);
  const int n_threads = 4;
  const int n_per_thread = 20000;
  const auto start = std::chrono::steady_clock::now();
  {
    ProgressBar bar("eval", n_threads * n_per_thread, true, sink);
    std::vector<std::thread> threads;
    for (int t = 0; t < n_threads; ++t) {
      threads.emplace_back([&bar] {
        for (int i = 0; i < n_per_thread; ++i) bar.advance();
      });
    }
    for (auto& th : threads) th.join();
    bar.set_suffix("ok 80000");
  }  // the destructor finishes the bar
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string out = read_all(sink);
  std::fclose(sink);

  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.back(), '\n');
  const std::string last_frame = out.substr(out.rfind('\r') + 1);
  EXPECT_NE(last_frame.find("80000/80000  100%  ok 80000  took"), std::string::npos) << last_frame;
  // First frame, frame at the total, final frame, plus at most one per 100 ms.
  const auto n_frames = std::count(out.begin(), out.end(), '\r');
  EXPECT_LE(n_frames, 3 + static_cast<long>(elapsed_s * 10) + 1) << elapsed_s;
  EXPECT_GE(n_frames, 2);
}

TEST(Progress, LogPrintsAboveTheBar) {
  std::FILE* sink = std::tmpfile();
  ASSERT_NE(sink, nullptr);
  {
    ProgressBar bar("eval", 2, true, sink);
    bar.advance(1, "first");
    bar.log("first: COMPILE_ERROR");
    bar.finish();
    bar.finish();  // idempotent
    bar.advance();  // ignored after finish
  }
  const std::string out = read_all(sink);
  std::fclose(sink);
  const auto log_at = out.find("\r\x1b[Kfirst: COMPILE_ERROR\n");
  ASSERT_NE(log_at, std::string::npos) << out;
  // The bar is redrawn after the log line, and the output ends with exactly one newline.
  EXPECT_NE(out.find("1/2", log_at), std::string::npos);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 2);
}

}  // namespace
}  // namespace kernelrl::common
