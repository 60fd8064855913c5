// The deployment examples of docs/service.md, parsed and checked without running them: the
// Kubernetes manifest is valid YAML with the objects and settings the notes describe, and every
// kernelrl command line in it and in the Slurm script is one the CLI accepts (--print-config).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/subprocess.hpp"

namespace kernelrl {
namespace {

namespace fs = std::filesystem;

std::string source_path(const std::string& relative) { return std::string(KERNELRL_SOURCE_DIR) + "/" + relative; }

common::RunResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env = {}) {
  common::RunLimits limits;
  limits.wall_time = std::chrono::milliseconds(60000);
  auto r = common::run_process(argv, KERNELRL_SOURCE_DIR, env, limits);
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : common::RunResult{};
}

// The JSON a `kernelrl ... --print-config` printed (the last JSON object of its output).
nlohmann::json printed_config(const std::string& output) {
  auto j = nlohmann::json::parse(output.substr(std::min(output.find('{'), output.size())), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << output;
  return j;
}

TEST(DeployDocs, TheKubernetesManifestParsesAndItsCommandLinesAreValid) {
  const std::string manifest = source_path("docs/deploy/kernelrl-service.yaml");
  const fs::path password_file =
      fs::temp_directory_path() / ("kernelrl-deploy-test-password-" + std::to_string(::getpid()));
  std::ofstream(password_file) << "a-password-of-the-test\n";
  auto parsed = run({"python3", "-c",
                     "import json, sys, yaml; json.dump(list(yaml.safe_load_all(open(sys.argv[1]))), sys.stdout)", manifest});
  ASSERT_EQ(parsed.exit_code, 0) << parsed.output;
  auto docs = nlohmann::json::parse(parsed.output, nullptr, false);
  ASSERT_TRUE(docs.is_array()) << parsed.output;
  std::vector<std::string> kinds;
  std::set<std::string> commands;
  for (const auto& d : docs) {
    kinds.push_back(d["kind"]);
    if (d["kind"] != "Deployment" && d["kind"] != "StatefulSet") continue;
    EXPECT_EQ(d["spec"]["selector"]["matchLabels"], d["spec"]["template"]["metadata"]["labels"]) << d["metadata"]["name"];
    for (const auto& c : d["spec"]["template"]["spec"]["containers"]) {
      std::vector<std::string> args = c.value("args", std::vector<std::string>{});
      if (c.value("command", std::vector<std::string>{}) != std::vector<std::string>{"kernelrl"}) {
        // Redis: every write fsynced, or an acknowledged result could be lost in a crash; a password.
        const std::string joined = nlohmann::json(args).dump();
        EXPECT_NE(joined.find("\"--appendfsync\",\"always\""), std::string::npos) << joined;
        EXPECT_NE(joined.find("\"--requirepass\",\"$(REDIS_PASSWORD)\""), std::string::npos) << joined;
        EXPECT_EQ(c["env"][0]["valueFrom"]["secretKeyRef"]["name"], "kernelrl-redis-auth") << c.dump();
        continue;
      }
      std::vector<std::string> argv = {KERNELRL_BINARY};
      argv.insert(argv.end(), args.begin(), args.end());
      // The password file the Secret mounts, here a file of the test's.
      const auto file = std::find(argv.begin(), argv.end(), "--redis-password-file");
      ASSERT_NE(file, argv.end()) << nlohmann::json(args).dump();
      EXPECT_EQ(*(file + 1), "/etc/kernelrl-redis/password");
      *(file + 1) = password_file.string();
      argv.push_back("--print-config");
      auto r = run(argv);
      ASSERT_EQ(r.exit_code, 0) << nlohmann::json(argv).dump() << "\n" << r.output;
      auto config = printed_config(r.output);
      EXPECT_EQ(config["command"], args[0]);
      EXPECT_EQ(config["redis"]["url"], "redis://:***@kernelrl-redis:6379") << config.dump();
      EXPECT_EQ(config["redis"]["auth"], "password");
      EXPECT_EQ(config.value("task_source", false), false);
      commands.insert(args[0]);
      if (args[0] == "worker") {
        EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"], 8);
        EXPECT_NE(std::find(args.begin(), args.end(), "all"), args.end());
      }
      if (args[0] == "serve") {
        EXPECT_EQ(config["listen"], "0.0.0.0:8080");
        EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"], "/healthz");
        EXPECT_EQ(c["readinessProbe"]["httpGet"]["port"], 8080);
      }
    }
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"Secret", "Secret", "StatefulSet", "Service", "NetworkPolicy", "Deployment",
                                             "Service", "Deployment"}));
  EXPECT_EQ(commands, (std::set<std::string>{"serve", "worker"}));
}

// A deployed worker runs native candidates in a process of their own unless told otherwise
// (--native-in-child, for measuring the cost); the flag that asked for it before it was the default
// is still accepted.
TEST(DeployDocs, WorkersRunNativeCandidatesApartUnlessTold) {
  const std::vector<std::pair<std::vector<std::string>, bool>> cases = {
      {{}, true}, {{"--native-in-child"}, false}, {{"--native-candidate-process"}, true}};
  for (const auto& [flags, apart] : cases) {
    std::vector<std::string> argv = {KERNELRL_BINARY, "worker", "--redis", "redis://127.0.0.1:1"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back("--print-config");
    auto r = run(argv);
    ASSERT_EQ(r.exit_code, 0) << nlohmann::json(argv).dump() << "\n" << r.output;
    EXPECT_EQ(printed_config(r.output)["options"].value("native_candidate_process", !apart), apart)
        << nlohmann::json(argv).dump();
  }
}

TEST(DeployDocs, TheSlurmScriptRunsAValidWorkerCommandPerNode) {
  const std::string script = source_path("docs/deploy/kernelrl-workers.sbatch");
  auto syntax = run({"bash", "-n", script});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.output;
  std::ifstream in(script);
  std::string line, directives;
  while (std::getline(in, line)) {
    if (line.rfind("#SBATCH", 0) == 0) directives += line + "\n";
  }
  for (const char* d : {"--nodes=", "--ntasks-per-node=1", "--gres=gpu:", "--signal=TERM@"}) {
    EXPECT_NE(directives.find(d), std::string::npos) << d << " missing from\n" << directives;
  }
  // Run the script with an `srun` that drops its own options and asks the command for its configuration.
  const fs::path bin = fs::temp_directory_path() / ("kernelrl-deploy-test-" + std::to_string(::getpid()));
  fs::create_directories(bin);
  std::ofstream(bin / "srun") << "#!/usr/bin/env bash\nwhile [[ \"$1\" == --* ]]; do shift; done\nexec \"$@\" --print-config\n";
  ::chmod((bin / "srun").c_str(), 0755);
  std::ofstream(bin / "password") << "a-password-of-the-test\n";
  auto r = run({"bash", script}, {"PATH=" + bin.string() + ":/usr/bin:/bin", "KERNELRL=" + std::string(KERNELRL_BINARY),
                                  "REDIS_URL=redis://eval-head:6380", "REDIS_PASSWORD_FILE=" + (bin / "password").string(),
                                  "SLURM_JOB_ID=42", "CUDA_VISIBLE_DEVICES=0,1,2,3"});
  fs::remove_all(bin);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto config = printed_config(r.output);
  EXPECT_EQ(config["command"], "worker");
  EXPECT_EQ(config["redis"]["url"], "redis://:***@eval-head:6380") << config.dump();
  EXPECT_EQ(config["redis"]["auth"], "password");
  EXPECT_EQ(config["gpus"], nlohmann::json::array({"0", "1", "2", "3"}));  // Slurm's allocation, one process each
  EXPECT_EQ(config["visibility_timeout_s"], 120);
}

}  // namespace
}  // namespace kernelrl
