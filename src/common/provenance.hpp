// Who produced a result: project commit and tool versions, gathered once per process.
#pragma once

#include <string>

namespace kernelrl::common {

// The project commit: $KERNELRL_COMMIT, else `git rev-parse` in the source tree (with "-dirty"
// when the tree has changes), else "unknown". Cached after the first call; thread-safe.
const std::string& project_commit();

}  // namespace kernelrl::common
