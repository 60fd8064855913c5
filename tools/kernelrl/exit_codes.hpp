// The exit codes every kernelrl command uses (main.cpp's header says which command exits with which).
#pragma once

namespace kernelrl::cli {

inline constexpr int kEvaluated = 0;          // evaluated (whatever the candidate's status), ran, reported
inline constexpr int kExpectationFailed = 1;  // `eval --check-expect` or `tasks check`: a result differs
inline constexpr int kCouldNotEvaluate = 2;   // bad task, missing file, no device, a run that stopped
inline constexpr int kUsageError = 64;        // the command line itself is wrong

}  // namespace kernelrl::cli
