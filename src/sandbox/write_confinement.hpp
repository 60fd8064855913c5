// Confines where a child may write, with Landlock (Linux 5.13+): after this, creating, writing,
// truncating, renaming or deleting files is allowed only below the given folders. Reading is not
// restricted (the candidate needs its libraries). Irreversible; applies to future threads.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::sandbox {

// Fails (and confines nothing) when the kernel has no Landlock or a folder cannot be opened.
common::Fallible confine_writes(const std::vector<std::string>& writable_roots);

}  // namespace kernelrl::sandbox
