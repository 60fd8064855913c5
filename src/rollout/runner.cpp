// RolloutRunner: sets up the run (configuration, run directory, tasks, earlier records), then
// `concurrency` threads work through units. A task's units are queued all at once (m x n: one per
// trajectory, all turns) or round by round (beam: one turn each, the next round once the round's
// scores are in); when the last unit of a task is done its returns and advantages are written.
#include "rollout/runner.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "common/crash_report.hpp"
#include "common/progress.hpp"
#include "rollout/credit.hpp"
#include "rollout/run_dir.hpp"
#include "task/selection.hpp"
#include "rollout/finished_turn.hpp"
#include "rollout/turn_step.hpp"
#include "rollout/unit_queue.hpp"
#include "trajectory/log.hpp"
#include "trajectory/reader.hpp"

namespace kernelrl::rollout {

using common::Expected;
using common::make_error;
using trajectory::TurnOutcome;
using trajectory::TurnRecord;

namespace {

struct TaskState {
  task::SelectedTask task;
  std::vector<std::vector<std::optional<FinishedTurn>>> turns;    // [trajectory][turn - 1]
  std::vector<std::vector<std::optional<TurnRef>>> planned_parent;  // beam: parent of each turn once planned
  int round = 1;            // beam: the round (turn) being run
  bool queued = false;      // m x n: the task's units are queued
  int n_units_open = 0;     // queued or running units
  bool credited = false;    // returns and advantages written for every turn
};

class RunState {
 public:
  RunState(const RolloutConfig& config, const PromptTemplates& templates, policy::Policy& policy, Evaluator& evaluator,
           std::optional<policy::TokenBudget> token_budget, trajectory::TrajectoryLog& log, std::vector<task::SelectedTask> tasks,
           std::vector<TurnRecord>* kept)
      : config_(config), context_{config, templates, policy, evaluator, std::move(token_budget)}, log_(log), kept_(kept) {
    for (auto& task : tasks) {
      TaskState s;
      s.task = std::move(task);
      s.turns.assign(static_cast<std::size_t>(config.n_trajectories),
                     std::vector<std::optional<FinishedTurn>>(static_cast<std::size_t>(config.n_turns)));
      s.planned_parent.assign(s.turns.size(), std::vector<std::optional<TurnRef>>(s.turns[0].size()));
      index_of_[s.task.path.string()] = tasks_.size();
      tasks_.push_back(std::move(s));
    }
  }

  // Takes in the records of an earlier run (updates applied): finished turns, and whether each is
  // credited. In a task not yet credited, a turn the policy gave no response to (an infrastructure
  // failure, not an answer) is sampled again, with every turn that continued from it.
  common::Fallible load(trajectory::TrajectoryFile earlier, RolloutSummary& summary) {
    std::vector<std::pair<TurnRecord, std::tuple<std::size_t, std::size_t, std::size_t>>> loaded;
    for (auto& record : earlier.records) {
      const std::string where = earlier.path.string() + ": " + record.task + ", trajectory " +
                                std::to_string(record.trajectory) + ", turn " + std::to_string(record.turn) + ": ";
      auto turn = finished_turn(record);
      if (!turn) return make_error(where + turn.error().message);
      if (!index_of_.count(turn->task)) return make_error(where + "task " + turn->task + " is not one of this run's tasks");
      const std::size_t i = index_of_[turn->task];
      auto& slots = tasks_[i].turns;
      if (turn->ref.trajectory < 0 || turn->ref.trajectory >= config_.n_trajectories || turn->ref.turn < 1 ||
          turn->ref.turn > config_.n_turns) {
        return make_error(where + "trajectory " + std::to_string(turn->ref.trajectory) + ", turn " +
                          std::to_string(turn->ref.turn) + " is outside this run's " +
                          std::to_string(config_.n_trajectories) + " x " + std::to_string(config_.n_turns));
      }
      const auto j = static_cast<std::size_t>(turn->ref.trajectory), t = static_cast<std::size_t>(turn->ref.turn - 1);
      slots[j][t] = std::move(*turn);
      loaded.push_back({std::move(record), {i, j, t}});
    }
    for (auto& task : tasks_) {
      task.credited = true;
      for (const auto& trajectory : task.turns)
        for (const auto& turn : trajectory) task.credited = task.credited && turn && turn->credited;
      if (!task.credited) summary.n_policy_errors_resampled += drop_policy_errors(task);
    }
    for (auto& [record, at] : loaded) {
      const auto& [i, j, t] = at;
      if (!tasks_[i].turns[j][t]) continue;  // sampled again
      ++summary.n_turns_found;  // the reader kept one record per turn
      keep(std::move(record));
    }
    return common::Ok{};
  }

  // Empties the slots of `task`'s turns without a response from the policy and of the turns that
  // continued from them (later turns, in order), so they are sampled again; under beam search every
  // turn from that round on (its beam is chosen again). Returns how many turns without a response
  // there were.
  int drop_policy_errors(TaskState& task) {
    int n = 0;
    std::set<std::pair<int, int>> dropped;
    bool beam_round_dropped = false;
    for (std::size_t t = 0; t < static_cast<std::size_t>(config_.n_turns); ++t) {
      if (config_.strategy == Strategy::BEAM && !beam_round_dropped) {
        for (const auto& trajectory : task.turns) beam_round_dropped |= trajectory[t] && trajectory[t]->policy_error;
      }
      for (auto& trajectory : task.turns) {
        auto& slot = trajectory[t];
        if (!slot) continue;
        const auto from = continues_from(slot->ref, slot->parent);
        if (slot->policy_error || beam_round_dropped || (from && dropped.count({from->trajectory, from->turn}))) {
          n += slot->policy_error ? 1 : 0;
          dropped.insert({slot->ref.trajectory, slot->ref.turn});
          slot.reset();
        }
      }
    }
    return n;
  }

  // Queues every task's first units (or credits tasks an earlier run finished), then works
  // through the queue on `concurrency` threads.
  Expected<RolloutSummary> run(RolloutSummary summary) {
    summary_ = summary;
    common::ProgressBar bar("rollout", summary.n_turns_total - summary.n_turns_found, config_.show_progress);
    bar_ = &bar;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (std::size_t i = 0; i < tasks_.size() && !failed_; ++i) advance(i);
    }
    std::vector<std::thread> workers;
    for (int i = 0; i < config_.concurrency; ++i) {
      workers.emplace_back([this] {
        common::CrashStack crash_stack;  // a stack overflow here is reported, not silent
        while (auto unit = queue_.pop()) {
          run_unit(*unit);
          finish_unit(*unit);
          queue_.done();
        }
      });
    }
    for (auto& w : workers) w.join();
    bar.finish();
    bar_ = nullptr;
    if (failure_) {
      return make_error(*failure_ + " (" + std::to_string(summary_.n_turns_run) +
                        " turns finished in this run are kept in trajectories.jsonl; rerun the same command to resume)");
    }
    return summary_;
  }

 private:
  // Keeps `record` for the caller, when asked to. Caller holds mutex_ (or runs alone).
  void keep(TurnRecord record) {
    if (!kept_) return;
    kept_index_[{record.task, record.trajectory, record.turn}] = kept_->size();
    kept_->push_back(std::move(record));
  }

  // The attempts a turn continuing `from` shows, oldest first. Caller holds mutex_.
  std::vector<Attempt> lineage(const TaskState& task, std::optional<TurnRef> from) const {
    std::vector<Attempt> attempts;
    while (from) {
      const FinishedTurn& f = *task.turns[static_cast<std::size_t>(from->trajectory)][static_cast<std::size_t>(from->turn - 1)];
      if (!f.unanswered) attempts.push_back(f.attempt);  // a prompt that did not fit was never answered
      from = continues_from(f.ref, f.parent);
    }
    std::reverse(attempts.begin(), attempts.end());
    return attempts;
  }

  // Records the run's first failure and stops handing out units. Caller holds mutex_.
  void fail_locked(const std::string& message) {
    if (!failure_) failure_ = message;
    failed_ = true;
    queue_.stop();
  }

  void fail(const std::string& message) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_locked(message);
  }

  void run_unit(const Unit& unit) {
    TaskState& task = tasks_[unit.task];
    const auto j = static_cast<std::size_t>(unit.trajectory);
    for (int turn = unit.first_turn; turn <= unit.last_turn && !failed_; ++turn) {
      const auto t = static_cast<std::size_t>(turn - 1);
      std::optional<TurnRef> parent;
      std::vector<Attempt> previous;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (task.turns[j][t]) continue;  // finished by an earlier run
        parent = task.planned_parent[j][t];
        previous = lineage(task, continues_from({unit.trajectory, turn}, parent));
      }
      auto record = run_turn(context_, {task.task, unit.trajectory, turn, parent, std::move(previous)});
      if (!record) return fail(task.task.path.string() + ", trajectory " + std::to_string(unit.trajectory) + ", turn " +
                               std::to_string(turn) + ": " + record.error().message);
      if (auto written = log_.append(*record); !written) return fail(written.error().message);
      auto finished = finished_turn(*record);
      if (!finished) return fail(finished.error().message);
      std::string suffix;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        task.turns[j][t] = std::move(*finished);
        ++summary_.n_turns_run;
        summary_.n_correct_run += record->correct ? 1 : 0;
        summary_.n_parse_errors_run += record->outcome == TurnOutcome::PARSE_ERROR ? 1 : 0;
        summary_.n_policy_errors_run += record->outcome == TurnOutcome::POLICY_ERROR ? 1 : 0;
        summary_.n_prompts_too_long_run += record->outcome == TurnOutcome::PROMPT_TOO_LONG ? 1 : 0;
        suffix = "correct " + std::to_string(summary_.n_correct_run) + "  unparsable " +
                 std::to_string(summary_.n_parse_errors_run);
        if (summary_.n_policy_errors_run > 0) suffix += "  no response " + std::to_string(summary_.n_policy_errors_run);
        if (summary_.n_prompts_too_long_run > 0) suffix += "  too long " + std::to_string(summary_.n_prompts_too_long_run);
        if (record->outcome == TurnOutcome::PROMPT_TOO_LONG) {
          // The policy was not asked: this says nothing about the server.
        } else if (record->outcome != TurnOutcome::POLICY_ERROR) {
          consecutive_policy_failures_ = 0;
        } else if (++consecutive_policy_failures_ >= config_.max_policy_failures) {
          fail_locked("the policy gave no response to " + std::to_string(consecutive_policy_failures_) +
                      " turns in a row (max policy failures " + std::to_string(config_.max_policy_failures) +
                      "); the server looks down; last: " + record->error);
        }
        keep(std::move(*record));
      }
      bar_->set_suffix(std::move(suffix));
      bar_->advance(1, task.task.id);
    }
  }

  void finish_unit(const Unit& unit) {
    std::lock_guard<std::mutex> lock(mutex_);
    TaskState& task = tasks_[unit.task];
    --task.n_units_open;
    if (!failed_) advance(unit.task);
  }

  // Queues the task's next units, or credits it when all its turns are done. Caller holds mutex_.
  void advance(std::size_t index) {
    TaskState& task = tasks_[index];
    if (task.n_units_open > 0) return;
    const int m = config_.n_trajectories;
    auto queue_missing = [&](int first_turn, int last_turn) {
      for (int j = 0; j < m; ++j) {
        for (int turn = first_turn; turn <= last_turn; ++turn) {
          if (task.turns[static_cast<std::size_t>(j)][static_cast<std::size_t>(turn - 1)]) continue;
          queue_.push({index, j, turn, last_turn});
          ++task.n_units_open;
          break;
        }
      }
    };
    if (config_.strategy != Strategy::BEAM) {
      if (!task.queued) {
        task.queued = true;
        queue_missing(1, config_.n_turns);
      }
    } else {
      for (; task.round <= config_.n_turns; ++task.round) {
        if (task.round > 1) plan_beam_round(task, task.round);
        queue_missing(task.round, task.round);
        if (task.n_units_open > 0) return;
      }
    }
    if (task.n_units_open == 0) credit(task);
  }

  // Beam: the parent of each trajectory's turn `round`, from the scores of turn round - 1.
  void plan_beam_round(TaskState& task, int round) {
    std::vector<double> scores;
    for (const auto& trajectory : task.turns) scores.push_back(trajectory[static_cast<std::size_t>(round - 2)]->score);
    const std::vector<int> kept = select_beam(scores, config_.beam_width);
    for (int j = 0; j < config_.n_trajectories; ++j) {
      task.planned_parent[static_cast<std::size_t>(j)][static_cast<std::size_t>(round - 1)] =
          TurnRef{beam_parent(kept, config_.n_trajectories, j), round - 1};
    }
  }

  // Writes the update records of every turn of a complete task. Caller holds mutex_.
  void credit(TaskState& task) {
    if (task.credited) return;
    TaskTurns turns;
    for (const auto& trajectory : task.turns) {
      turns.scores.emplace_back();
      turns.from.emplace_back();
      turns.unanswered.emplace_back();
      for (const auto& turn : trajectory) {
        turns.scores.back().push_back(turn->score);
        turns.from.back().push_back(continues_from(turn->ref, turn->parent));
        turns.unanswered.back().push_back(turn->unanswered || turn->policy_error);  // neither is an answer
      }
    }
    const TaskCredit credit = assign_credit(turns, config_.returns, config_.advantage);
    for (std::size_t j = 0; j < task.turns.size(); ++j) {
      for (std::size_t t = 0; t < task.turns[j].size(); ++t) {
        const TurnRef ref{static_cast<int>(j), static_cast<int>(t + 1)};
        if (!credit.returns[j][t] || !credit.advantages[j][t]) continue;  // no answer: nothing to credit
        const trajectory::TurnUpdate update{task.task.path.string(), ref, credit.returns[j][t], credit.advantages[j][t]};
        if (auto written = log_.append(update); !written) return fail_locked(written.error().message);
        if (kept_) trajectory::apply(update, (*kept_)[kept_index_.at({update.task, ref.trajectory, ref.turn})]);
      }
    }
    task.credited = true;
    ++summary_.n_tasks_credited;
  }

  const RolloutConfig& config_;
  const TurnContext context_;
  trajectory::TrajectoryLog& log_;
  std::vector<TurnRecord>* kept_;  // every finished turn's record, when the caller asked for them
  std::map<std::tuple<std::string, int, int>, std::size_t> kept_index_;  // (task, trajectory, turn) -> index in kept_
  std::vector<TaskState> tasks_;
  std::map<std::string, std::size_t> index_of_;  // task path as recorded -> index into tasks_
  UnitQueue queue_;
  std::mutex mutex_;  // guards tasks_' turns and counters, summary_, failure_
  std::atomic<bool> failed_{false};
  std::optional<std::string> failure_;
  int consecutive_policy_failures_ = 0;  // turns finished in a row with a policy error, across the run
  RolloutSummary summary_;
  common::ProgressBar* bar_ = nullptr;
};

}  // namespace

RolloutRunner::RolloutRunner(RolloutConfig config, policy::Policy& policy, eval::Engine& engine)
    : config_(std::move(config)),
      policy_(policy),
      owned_evaluator_(std::make_unique<EngineEvaluator>(engine)),
      evaluator_(*owned_evaluator_) {}

RolloutRunner::RolloutRunner(RolloutConfig config, policy::Policy& policy, Evaluator& evaluator)
    : config_(std::move(config)), policy_(policy), evaluator_(evaluator) {}

Expected<RolloutSummary> RolloutRunner::run(std::vector<TurnRecord>* records) {
  auto config = resolve(config_);
  if (!config) return config.error();
  auto tasks = task::select_tasks(config->tasks, config->split, config->task_size);
  if (!tasks) return tasks.error();
  auto templates = load_templates(config->templates_dir, config->format, config->example_file);
  if (!templates) return templates.error();

  auto budget = token_budget(config->prompt, policy_);
  if (!budget) return budget.error();
  auto resumed = open_run_dir(config->out_dir, make_run_json(*config, policy_.describe(), evaluator_.device()));
  if (!resumed) return resumed.error();
  auto earlier = trajectory::load_and_repair(trajectories_path(config->out_dir));
  if (!earlier) return earlier.error();
  auto log = trajectory::TrajectoryLog::open(trajectories_path(config->out_dir));
  if (!log) return log.error();

  RolloutSummary summary;
  summary.resumed = *resumed;
  summary.n_tasks = static_cast<int>(tasks->size());
  summary.n_turns_total = summary.n_tasks * config->n_trajectories * config->n_turns;
  if (records) records->clear();
  RunState state(*config, *templates, policy_, evaluator_, std::move(*budget), **log, std::move(*tasks), records);
  if (auto loaded = state.load(std::move(*earlier), summary); !loaded) return loaded.error();
  return state.run(summary);
}

}  // namespace kernelrl::rollout
