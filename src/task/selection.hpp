// Which tasks a command works on: the task files of a folder (searched recursively), an evenly
// spaced sample of them, and the selection of tasks from files and folders by the split their
// manifest gives them, at a size, each with the source text prompts show.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::task {

// Whether `file` is named as a task file is: *.py not starting with "_".
bool is_task_file_name(const std::filesystem::path& file);

// The task files (is_task_file_name, sorted) below `dir`; an Error names a missing folder.
common::Expected<std::vector<std::filesystem::path>> find_task_files(const std::filesystem::path& dir);

// `n` of `files` (all when n >= their number or n is 0), evenly spaced, first and last included.
std::vector<std::filesystem::path> evenly_spaced(const std::vector<std::filesystem::path>& files, std::size_t n);

struct SelectedTask {
  std::filesystem::path given;       // as given, or as found under a given folder (what to select again)
  std::filesystem::path path;        // `given` at the size asked: the file itself, or a sized copy
  std::string id;                    // file name without .py; names the task's candidates folder
  std::optional<int> level;          // from the manifest; none when the task has no entry
  std::optional<std::string> split;  // "train" / "test" from the manifest
  std::string source;                // the task file's text
};

// Every task of `inputs` (files, or folders searched recursively) whose split passes `split`
// ("all" keeps tasks without a manifest entry too), in the order given, each folder's files
// sorted, at `size` (task/sizes.hpp: path and source are the sized copy's; a task without a
// manifest entry keeps its own size). Errors name the missing file or folder, an unreadable
// manifest, a size a listed task lacks, two tasks sharing an id, or a selection that is empty.
common::Expected<std::vector<SelectedTask>> select_tasks(const std::vector<std::filesystem::path>& inputs,
                                                         const std::string& split, const std::string& size = "full");

}  // namespace kernelrl::task
