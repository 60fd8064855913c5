// The orchestrator's handle on one worker process: spawns `<binary> worker` with two private
// pipes and exchanges JSON lines with it. Thread-safe: one request at a time per worker.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"

namespace kernelrl::sandbox {

class WorkerClient {
 public:
  // Starts `binary worker --in FD --out FD [extra_args...]`. The worker imports torch on its own
  // time; the first request waits for that.
  static common::Expected<std::unique_ptr<WorkerClient>> spawn(const std::string& binary,
                                                               std::vector<std::string> extra_args = {});
  ~WorkerClient();  // closes the pipes and reaps the worker
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // Sends one request and waits for its reply. If the worker died, it is restarted once and the
  // request fails with a message saying so.
  common::Expected<nlohmann::json> request(nlohmann::json request);

 private:
  WorkerClient(std::string binary, std::vector<std::string> extra_args)
      : binary_(std::move(binary)), extra_args_(std::move(extra_args)) {}
  common::Fallible start();
  void stop();

  std::string binary_;
  std::vector<std::string> extra_args_;
  std::mutex mutex_;
  pid_t pid_ = -1;
  int to_worker_ = -1;
  int from_worker_ = -1;
  std::string buffer_;
  long next_id_ = 1;
};

}  // namespace kernelrl::sandbox
