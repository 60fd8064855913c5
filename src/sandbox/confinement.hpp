// Resource confinement of an evaluating child.
//
// confine_writes: where the child may write, with Landlock (Linux 5.13+): after it, creating, writing,
// truncating, renaming or deleting files is allowed only below the given folders. Reading is not
// restricted (the candidate needs its libraries). Irreversible; applies to future threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::sandbox {

// Fails (and confines nothing) when the kernel has no Landlock or a folder cannot be opened.
common::Fallible confine_writes(const std::vector<std::string>& writable_roots);

// Caps the address space (RLIMIT_AS) at its current size plus `headroom_bytes`; returns the limit.
// Allocations past it fail (malloc returns NULL, operator new throws) instead of exhausting memory.
common::Expected<std::uint64_t> limit_address_space_growth(std::uint64_t headroom_bytes);

}  // namespace kernelrl::sandbox
