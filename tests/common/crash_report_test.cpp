// The crash report names the signal, the faulting address and a backtrace, also for a stack
// overflow on a worker thread (it runs on the thread's alternate signal stack).
#include "common/crash_report.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace kernelrl::common {
namespace {

// Recursion the optimiser cannot turn into a loop: each frame keeps a buffer alive across the call.
// The limit is never reached: an 8 MiB stack holds far fewer than a billion 512-byte frames.
int deep(int n, volatile int limit) {
  volatile char pad[512];
  pad[n % 512] = static_cast<char>(n);
  if (n >= limit) return pad[0];
  return deep(n + 1, limit) + pad[(n + 1) % 512];
}

TEST(CrashReport, NullDereferenceIsReportedWithTheAddress) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        install_crash_report();
        volatile int* p = nullptr;
        *p = 1;
      },
      "fatal signal Segmentation fault at address 0x0 .*instruction pointer 0x[0-9a-f]+.*backtrace");
}

TEST(CrashReport, CallThroughANullFunctionPointerShowsTheCaller) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        install_crash_report();
        void (*volatile fn)() = nullptr;
        fn();
      },
      "instruction pointer 0x0,.*top of the stack.*common_crash_report_test\\(");
}

TEST(CrashReport, StackOverflowOnAWorkerThreadIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        install_crash_report();
        std::thread t([] {
          CrashStack stack;
          deep(0, 1 << 30);
        });
        t.join();
      },
      "fatal signal Segmentation fault at address 0x[0-9a-f]+.*thread [0-9]+ of process [0-9]+");
}

TEST(CrashReport, AbortIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        install_crash_report();
        std::abort();
      },
      "fatal signal Aborted, instruction pointer");
}

}  // namespace
}  // namespace kernelrl::common
