// Resource confinement of an evaluating child.
//
// confine_writes: where the child may write, with Landlock (Linux 5.13+): after it, creating, writing,
// truncating, renaming or deleting files is allowed only below the given folders. Reading is not
// restricted (the candidate needs its libraries). Irreversible; applies to future threads.
//
// confine_reads: where a process may read, list and execute, with Landlock: a second layer beside
// confine_writes (each layer handles its own rights; an access must pass every layer). Used for the
// compilers a candidate's build runs (tools/confine --read), so that a file-reading directive the
// static scan missed (`.incbin` spelt through macro pasting) finds nothing outside the toolchain,
// the headers and the candidate's own folder. Irreversible; inherited by threads and children.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::sandbox {

// A root may be a single file (/dev/null). Fails (and confines nothing) when the kernel has no Landlock
// or a root cannot be opened.
common::Fallible confine_writes(const std::vector<std::string>& writable_roots);

// Reading files, listing folders and executing are allowed only below `readable_roots` (folders, or
// single files such as /etc/ld.so.cache). Roots that do not exist are skipped. Fails (and confines
// nothing) when the kernel has no Landlock or a root cannot be opened for another reason.
common::Fallible confine_reads(const std::vector<std::string>& readable_roots);

// Where an evaluating child, or a candidate's process started from it, may write once confined:
// its scratch folder (the current directory), /dev (GPU device files) and CUDA's JIT cache
// (~/.nv) when it exists.
std::vector<std::string> candidate_writable_roots();

// Caps the address space (RLIMIT_AS) at its current size plus `headroom_bytes`; returns the limit.
// Allocations past it fail (malloc returns NULL, operator new throws) instead of exhausting memory.
common::Expected<std::uint64_t> limit_address_space_growth(std::uint64_t headroom_bytes);

// No file an evaluating child or a candidate's process writes, its log included, may grow past this
// (RLIMIT_FSIZE): a candidate printing in a loop is killed (SIGXFSZ) instead of filling the disk.
inline constexpr std::uint64_t kMaxFileBytes = 64ull << 20;

// Sets RLIMIT_FSIZE to kMaxFileBytes. `for_good` sets the hard limit too, as a process about to run
// candidate code must (sandbox/candidate_confinement.hpp); without it only the soft limit, which the
// process may still lift for a file of its own making (with_file_size_limit_lifted).
common::Fallible limit_file_size(bool for_good);

// Runs `size_file` with the soft file-size limit raised to the hard one, then puts it back: for an
// evaluating child that sizes the memory file it shares with a candidate's process (a CPU call's
// tensors often pass 64 MB) before it runs or confines anything. Fails without running it when
// the hard limit is below `n_bytes` (the process would be killed by SIGXFSZ).
common::Fallible with_file_size_limit_lifted(std::uint64_t n_bytes, const std::function<common::Fallible()>& size_file);

}  // namespace kernelrl::sandbox
