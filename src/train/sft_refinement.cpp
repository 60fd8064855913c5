#include "train/sft_refinement.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "common/fs.hpp"
#include "rollout/finished_turn.hpp"
#include "task/selection.hpp"
#include "trajectory/reader.hpp"

namespace kernelrl::train {

namespace fs = std::filesystem;
using common::make_error;
using trajectory::TurnOutcome;
using trajectory::TurnRecord;

namespace {

// A real attempt that failed: the model answered and the answer was wrong or could not be read.
bool failed_attempt(const TurnRecord& r) {
  return !r.correct && (r.outcome == TurnOutcome::EVALUATED || r.outcome == TurnOutcome::PARSE_ERROR);
}

}  // namespace

common::Expected<std::vector<SftPair>> make_refinement_pairs(const rollout::RolloutConfig& config,
                                                             const fs::path& solutions_dir, const fs::path& trajectories,
                                                             int max_turn) {
  auto tasks = task::select_tasks(config.tasks, config.split, config.task_size);
  if (!tasks) return tasks.error();
  std::map<std::string, const task::SelectedTask*> by_id;
  for (const auto& t : *tasks) {
    if (!t.split || *t.split != "test") by_id[t.id] = &t;
  }
  auto templates = rollout::load_templates(config.templates_dir, config.format, config.example_file);
  if (!templates) return templates.error();
  const fs::path file = trajectory::trajectory_file_path(trajectories);
  auto read = trajectory::read_trajectory_file(file);
  if (!read) return read.error();
  std::map<std::tuple<std::string, int, int>, const TurnRecord*> at;  // (task, trajectory, turn)
  for (const auto& r : read->records) at[{r.task, r.trajectory, r.turn}] = &r;

  std::vector<SftPair> pairs;
  std::map<std::string, std::string> solutions;  // task id -> its answer
  for (const auto& r : read->records) {
    if (!failed_attempt(r) || r.turn >= max_turn || !by_id.count(r.task_id)) continue;
    if (!solutions.count(r.task_id)) {
      const fs::path solution = solution_path(solutions_dir, r.task_id, config.format);
      std::error_code ec;
      if (!fs::exists(solution, ec)) {
        solutions[r.task_id] = "";
      } else {
        auto code = common::read_file(solution, 1u << 20);
        if (!code) return code.error();
        solutions[r.task_id] = solution_answer(*templates, *code);
      }
    }
    if (solutions[r.task_id].empty()) continue;
    // The attempts the next turn's prompt shows: this one and those it continued from, oldest first.
    std::vector<rollout::Attempt> attempts;
    for (const TurnRecord* cur = &r; cur;) {
      auto finished = rollout::finished_turn(*cur);
      if (!finished) return make_error(file.string() + ": " + r.task + ", trajectory " + std::to_string(cur->trajectory) +
                                       ", turn " + std::to_string(cur->turn) + ": " + finished.error().message);
      if (!finished->unanswered) attempts.push_back(finished->attempt);
      const auto from = rollout::continues_from(cur->ref(), cur->parent);
      cur = from && at.count({r.task, from->trajectory, from->turn}) ? at[{r.task, from->trajectory, from->turn}] : nullptr;
    }
    std::reverse(attempts.begin(), attempts.end());
    auto prompt = rollout::build_prompt(*templates, by_id[r.task_id]->source, attempts, config.prompt);
    pairs.push_back({r.task_id, std::move(prompt.messages), solutions[r.task_id], r.turn + 1});
  }
  if (pairs.empty()) {
    return make_error(file.string() + ": no failed attempt before turn " + std::to_string(max_turn) +
                      " of a train-split task with a solution in " + solutions_dir.string());
  }
  return pairs;
}

}  // namespace kernelrl::train
