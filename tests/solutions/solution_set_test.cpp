// Published solution sets read in their authors' layouts, matched to task files, with errors that
// name the file, the line or key and the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "solutions/solution_set.hpp"
#include "solutions/task_match.hpp"

namespace kernelrl::solutions {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("kernelrl-solutions-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(SolutionSet, ReadsCudaL1sJsonLines) {
  const auto d = fresh_dir("l1");
  write(d / "h100.json",
        R"({"level_id": 1, "task_id": 3, "ref_code": "x", "custom_code": "class ModelNew: pass", "score_default": 1.76})" "\n"
        R"({"level_id": 2, "task_id": 17, "custom_code": null, "score_default": 1.0})" "\n"
        "\n"
        R"({"level_id": 1, "task_id": 3, "custom_code": "other", "name": "second_try"})" "\n");
  auto set = read_solution_set(d / "h100.json");
  ASSERT_TRUE(set) << set.error().message;
  ASSERT_EQ(set->size(), 3u);
  EXPECT_EQ((*set)[0].name, "level1_task3");
  EXPECT_EQ((*set)[0].level, 1);
  EXPECT_EQ((*set)[0].task_id, 3);
  EXPECT_DOUBLE_EQ(*(*set)[0].claimed_speedup, 1.76);
  EXPECT_EQ((*set)[0].origin, (d / "h100.json").string() + ":1");
  EXPECT_TRUE((*set)[1].code.empty()) << "custom_code null: no solution published";
  EXPECT_EQ((*set)[2].name, "second_try");
  EXPECT_FALSE((*set)[2].claimed_speedup);
}

TEST(SolutionSet, ReadsAMapAndAFolderWithItsClaims) {
  const auto d = fresh_dir("map");
  write(d / "set.json", R"({"003_softmax": "code a", "002_relu": {"code": "code b", "speedup": 2.5}})");
  auto map = read_solution_set(d / "set.json");
  ASSERT_TRUE(map) << map.error().message;
  ASSERT_EQ(map->size(), 2u);
  EXPECT_EQ((*map)[1].name, "003_softmax");
  EXPECT_DOUBLE_EQ(*(*map)[0].claimed_speedup, 2.5);

  write(d / "folder/002_relu.py", "relu code");
  write(d / "folder/003_softmax.py", "softmax code");
  write(d / "folder/claims.json", R"({"002_relu": 1.3})");
  write(d / "more_claims.json", R"({"003_softmax": 0.9})");
  auto folder = read_solution_set(d / "folder", d / "more_claims.json");
  ASSERT_TRUE(folder) << folder.error().message;
  ASSERT_EQ(folder->size(), 2u);
  EXPECT_EQ((*folder)[0].code, "relu code");
  EXPECT_DOUBLE_EQ(*(*folder)[0].claimed_speedup, 1.3);
  EXPECT_DOUBLE_EQ(*(*folder)[1].claimed_speedup, 0.9);
}

TEST(SolutionSet, ErrorsNameTheFileTheEntryAndTheField) {
  const auto d = fresh_dir("errors");
  auto message = [&](const std::string& text, const std::string& claims = "") {
    write(d / "set.jsonl", text);
    if (!claims.empty()) write(d / "claims.json", claims);
    auto set = read_solution_set(d / "set.jsonl", claims.empty() ? std::nullopt : std::optional<fs::path>(d / "claims.json"));
    EXPECT_FALSE(set);
    return set ? std::string() : set.error().message;
  };
  EXPECT_NE(message(R"({"task_id": 1, "custom_code": 5})").find("\"custom_code\" must be a string"), std::string::npos);
  EXPECT_NE(message("{\"task_id\": 1, \"custom_code\": \"a\"}\nnot json\n").find("set.jsonl:2"), std::string::npos);
  EXPECT_NE(message(R"({"custom_code": "a"})").find("names no task"), std::string::npos);
  EXPECT_NE(message(R"({"task_id": 1, "custom_code": "a", "score_default": -2})").find("positive number"), std::string::npos);
  EXPECT_NE(message(R"({"task_id": "one", "custom_code": "a"})").find("\"task_id\""), std::string::npos);
  EXPECT_NE(message(R"({"task_id": 1, "custom_code": "a"})", R"({"nobody": 2})").find("\"nobody\" names no solution"),
            std::string::npos);
  EXPECT_NE(read_solution_set(d / "absent.json").error().message.find("no such file"), std::string::npos);
}

TEST(SolutionSet, NamesThatWouldShareAFileAreToldApart) {
  const auto d = fresh_dir("names");
  write(d / "set.jsonl", "{\"name\": \"a/b\", \"code\": \"1\"}\n{\"name\": \"a_b\", \"code\": \"2\"}\n{\"name\": \"a/b\", \"code\": \"3\"}\n");
  auto set = read_solution_set(d / "set.jsonl");
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_EQ((*set)[0].name, "a/b");
  EXPECT_EQ((*set)[1].name, "a_b_2");
  EXPECT_EQ((*set)[2].name, "a/b_3");  // a_b_2 taken by the second
  EXPECT_EQ(file_name_for("../x y"), "_.._x_y");
}

TEST(TaskIndex, MatchesByLevelAndNumberByNameAndByLeadingNumber) {
  const auto d = fresh_dir("tasks");
  write(d / "level1/003_softmax.py", "");
  write(d / "level1/019_relu.py", "");
  write(d / "level2/003_conv_relu.py", "");
  auto index = TaskIndex::scan(d);
  ASSERT_TRUE(index) << index.error().message;
  EXPECT_EQ(index->size(), 3u);
  Solution by_number{"level2_task3", 2, 3, "c", std::nullopt, ""};
  EXPECT_EQ(*index->find(by_number), d / "level2/003_conv_relu.py");
  Solution by_name{"019_relu", std::nullopt, std::nullopt, "c", std::nullopt, ""};
  EXPECT_EQ(*index->find(by_name), d / "level1/019_relu.py");
  Solution by_leading{"19_ReLU", std::nullopt, std::nullopt, "c", std::nullopt, ""};
  EXPECT_EQ(*index->find(by_leading), d / "level1/019_relu.py");
  Solution ambiguous{"3_Softmax", std::nullopt, std::nullopt, "c", std::nullopt, ""};
  auto several = index->find(ambiguous);
  ASSERT_FALSE(several);
  EXPECT_NE(several.error().message.find("2 tasks"), std::string::npos) << several.error().message;
  Solution missing{"level1_task99", 1, 99, "c", std::nullopt, ""};
  EXPECT_NE(index->find(missing).error().message.find("level 1 task number 99"), std::string::npos);
  EXPECT_FALSE(TaskIndex::scan(d / "level3"));
}

}  // namespace
}  // namespace kernelrl::solutions
