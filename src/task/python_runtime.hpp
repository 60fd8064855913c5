// The embedded CPython interpreter of a worker process: started once, with the site-packages of
// the interpreter kernelrl was configured with (where torch lives), and torch imported without
// touching CUDA. Not thread-safe: only the worker's single thread uses Python.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::task {

// Starts the interpreter (idempotent) and imports torch unless `import_torch` is false (a
// candidate's process confines its files before torch's import can start threads). Fails with a
// message naming the interpreter if torch cannot be imported.
common::Fallible start_python(bool import_torch = true);

// Must be called in a child right after fork() so the interpreter's state is valid there.
void python_after_fork_child();

// What the started interpreter reads its code from (sys.prefix, sys.exec_prefix, sys.base_prefix,
// sys.path, where torch is, found without importing it): readable by a process whose files are
// confined (runner/confine.hpp, eval/child_task_confinement.hpp).
std::vector<std::string> interpreter_paths();

// Formats the Python exception being handled (pybind11::error_already_set text) into one line per
// frame of the user's file only, ending with "ExcType: message". `file_name` filters frames.
std::string format_python_error(const std::string& what, const std::string& file_name);

}  // namespace kernelrl::task
