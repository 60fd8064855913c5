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
//
// confine_files: both in one layer, for the process that runs a candidate apart (kernelrl-runner's):
// reads below given roots, writes to given device files only, no file made or removed anywhere.
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

// Device files a candidate's process may use. Never /dev/shm (shared with every other process) nor
// /dev as a folder (a folder's rights would let it create files there).
struct CandidateDeviceFiles {
  std::vector<std::string> readable;  // /dev/null, /dev/zero, /dev/urandom, /dev/random and the writable ones
  std::vector<std::string> writable;  // /dev/null; with CUDA every /dev/nvidia* device and /dev/nvidia-caps/*
};

// The device files that exist now (character devices only, for the GPU's); `cuda` adds the GPU's.
CandidateDeviceFiles device_files_for_candidates(bool cuda);

// One Landlock layer for the process that runs a candidate apart: reading files, listing folders and
// executing only below `readable_roots` (folders or single files; missing ones skipped), reading and
// writing only the single files in `writable_files` (device files; missing ones skipped, a folder is an
// error), and creating, removing, renaming, linking or truncating nothing anywhere. Where the kernel
// has Landlock ABI 6, also no connecting to abstract Unix sockets or signalling processes outside the
// layer. Landlock binds the calling thread and its later threads only, so it fails while the process
// has more than one thread (confine before starting any: a thread left unconfined could be steered by
// code that rewrites its memory). Fails, confining nothing, without Landlock. Irreversible.
common::Fallible confine_files(const std::vector<std::string>& readable_roots, const std::vector<std::string>& writable_files);

// Where an evaluating child, or a candidate's process started from it, may write once confined:
// its scratch folder (the current directory), /dev (GPU device files) and CUDA's JIT cache
// (~/.nv) when it exists.
std::vector<std::string> candidate_writable_roots();

// Drops every capability of this process (effective, permitted, inheritable, ambient, and the
// bounding set where it may): uid 0 without them is held to file permissions like any user, and
// cannot undo what the runner's filter forbids. Irreversible. Fails when capset does.
common::Fallible drop_capabilities();

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
