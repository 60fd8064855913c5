// One forked child under watch: the worker forks it, reads the phase lines and the final record it
// writes to a private channel (a Unix socket pair, which unlike a pipe cannot be reopened through
// /proc/self/fd), and kills its whole process group when a phase outlives its limit.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace kernelrl::sandbox {

// ChildOutcome::last_phase of a child that ended before its first phase line.
inline constexpr const char* kStartPhase = "start";

struct ChildOutcome {
  bool has_record = false;
  nlohmann::json record;       // the child's final JSON line
  std::string last_phase;      // phase the child was in when it ended (kStartPhase: none yet)
  bool timed_out = false;
  double phase_limit_s = 0;    // the limit that ran out, when timed_out
  int exit_code = -1;          // when it exited
  int term_signal = 0;         // when a signal ended it
  std::string stderr_tail;     // last lines of what the child wrote to stdout/stderr
  double wall_ms = 0;
  bool orphaned = false;       // the watcher's parent ended meanwhile (end_watched_children_when_orphaned)
  bool unauthenticated = false;  // a line failed its MAC (ChildHandle::report_key): nothing after it was read
};

// Describes how a child ended without a record: "killed by signal 11 (SIGSEGV)", "exited with code 1".
std::string describe_end(const ChildOutcome& o);

// Children that reported are killed but reaped later (their CUDA teardown overlaps the next
// evaluation). reap_children(false) collects those already gone, reap_children(true) waits for
// all; run_child_process calls the former. Not thread-safe: the worker's single thread only.
// Members left of killed children's process groups (a host candidate's runner) are reaped too,
// once orphaned to this process (become_subreaper).
void reap_children(bool wait);
std::size_t n_unreaped_children();

// Waits up to `limit` until every process of the killed child `pid`'s group has ended (and reaps
// those that are this process's); true when none is left. For a child whose end may leave much
// device memory behind until its CUDA context is torn down.
bool wait_for_group_end(pid_t pid, std::chrono::milliseconds limit);

// Makes orphaned descendants this process's children (PR_SET_CHILD_SUBREAPER), so reap_children
// can collect a killed child's own children instead of leaving them to init. False on failure.
bool become_subreaper();

// From now on watch_child checks, at least once a second, that this process's parent is still
// `parent`; once it is not (the process that started this worker ended, even by SIGKILL), it kills
// the watched child's group and returns with `orphaned` set instead of waiting out the phase's limit.
// Not thread-safe: the worker's single thread only.
void end_watched_children_when_orphaned(pid_t parent);

// A forked child not yet watched: its report channel, and a request channel the parent may write one
// request into before watching (a "warm" child that prepared itself while waiting).
struct ChildHandle {
  int pid = -1;
  int report_fd = -1;   // parent's read end
  int request_fd = -1;  // parent's write end: the request, then phase grants; closed by watch_child
  std::string log_path;
  std::string error;    // why spawning failed (pid stays -1)
  // When set (64 hex digits): every line the child writes must be signed with it
  // (common/report_mac.hpp, numbered from 0); the first that is not ends the watch.
  std::string report_key;
};

// Forks; the child gets its own process group, chdirs into `scratch_dir`, sends stdout/stderr to
// a log there, may write no file past 64 MB (SIGXFSZ), runs body(report_fd, request_fd), then
// _exit()s.
ChildHandle spawn_child(const std::function<void(int report_fd, int request_fd)>& body, const std::string& scratch_dir);

// Reads the child's phase lines and final record (each verified under child.report_key when set),
// enforcing `phase_limits_s` (a phase without an
// entry gets `default_limit_s`, counted from this call), kills its group at the end. Blocks.
// A phase line may carry `"limits_s": {PHASE: SECONDS}` for its own and later phases, replacing those of
// `phase_limits_s`; only the first line that carries them counts (the child sends it before it
// runs anything untrusted, so nothing that runs later can lengthen its own limits).
// On each phase line it calls `on_phase(phase)` (when set; it may block, e.g. for the device
// lock, without counting against the phase's limit), then grants the phase by writing "go" to
// the request channel: a child that sends phase lines waits for that grant (wait_for_grant).
// Ignores SIGPIPE in the calling process.
ChildOutcome watch_child(ChildHandle& child, const std::map<std::string, double>& phase_limits_s,
                         double default_limit_s, const std::function<void(const std::string&)>& on_phase = {});

// In the child: waits for the worker's grant of the phase just announced. False when the worker
// is gone (the channel closed).
bool wait_for_grant(int request_fd);

// Kills a spawned child that will not be used; it is reaped later.
void discard_child(ChildHandle& child);

// spawn_child + watch_child for a child that needs no request: forks; the child chdirs into `scratch_dir`, sends stdout/stderr to a log there, and runs
// body(report_fd), then _exit()s. `phase_limits_s` maps phase names to wall-time limits; a phase
// without an entry gets `default_limit_s`. Blocks until the child has ended and been reaped.
ChildOutcome run_child_process(const std::function<void(int report_fd)>& body, const std::string& scratch_dir,
                               const std::map<std::string, double>& phase_limits_s, double default_limit_s);

}  // namespace kernelrl::sandbox
