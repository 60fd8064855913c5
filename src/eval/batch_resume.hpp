// Resuming a batch (`kernelrl eval --batch FILE --out RECORDS --resume`): which of the batch's jobs
// already have a result record in RECORDS, from an earlier run that was stopped. A job is done when
// a record names its task and candidate (and its format, device and rules where the job gives
// them) and is not a "could_not_evaluate" line; a job listed k times needs k records. Lines that are
// not JSON (the last line of a run killed while writing it) are counted and skipped, never removed.
#pragma once

#include <cstddef>
#include <filesystem>
#include <vector>

#include "common/expected.hpp"
#include "eval/engine.hpp"

namespace kernelrl::eval {

struct ResumePoint {
  std::vector<bool> done;          // per job of the batch
  std::size_t n_records = 0;       // result records read
  std::size_t n_unreadable = 0;    // lines skipped: not a JSON object
  std::size_t n_not_evaluated = 0; // "could_not_evaluate" lines (their jobs run again)
  bool ends_mid_line = false;      // the file's last line has no newline: append one before new records
};

// A missing file is a fresh start (nothing done). An Error names the file when it cannot be read.
common::Expected<ResumePoint> find_resume_point(const std::filesystem::path& records, const std::vector<EvalJob>& jobs);

}  // namespace kernelrl::eval
