// nvcc_steps::parse_dryrun and parallel_script on nvcc --dryrun text of the shape CUDA 13 prints:
// steps found by role in any order, anything else refused with a reason, and a script that writes
// the module id before both chains and shows the host chain's errors alone.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "common/fs.hpp"
#include "common/subprocess.hpp"
#include "compile/nvcc_steps.hpp"

namespace kernelrl::compile::nvcc_steps {
namespace {

const std::string kHostPre = R"(#$ gcc -std=c++17 -E -x c++ -D__CUDACC__ "x.cu" -o "/s/tmpxft_1-5_x.cpp4.ii")";
const std::string kCudafe =
    R"(#$ cudafe++ --c++17 --gen_c_file_name "/s/tmpxft_1-6_x.cudafe1.cpp" --gen_module_id_file --module_id_file_name "/s/tmpxft_1-4_x.module_id" "/s/tmpxft_1-5_x.cpp4.ii")";
const std::string kDevicePre = R"(#$ gcc -std=c++17 -D__CUDA_ARCH__=900 -E -x c++ "x.cu" -o "/s/tmpxft_1-7_x.cpp1.ii")";
const std::string kCicc =
    R"(#$ "$CICC_PATH/cicc" --c++17 --module_id_file_name "/s/tmpxft_1-4_x.module_id" "/s/tmpxft_1-7_x.cpp1.ii" -o "/s/tmpxft_1-6_x.ptx")";
const std::string kPtxas = R"(#$ ptxas -arch=sm_90 -m64 "/s/tmpxft_1-6_x.ptx" -o "/s/tmpxft_1-8_x.cubin")";
const std::string kFatbin = R"(#$ fatbinary -64 "--image3=kind=elf,sm=90,file=/s/tmpxft_1-8_x.cubin" --embedded-fatbin="/s/tmpxft_1-3_x.fatbin.c")";
const std::string kRm = "#$ rm /s/tmpxft_1-3_x.fatbin";
const std::string kHostCompile = R"(#$ gcc -std=c++17 -c -x c++ "/s/tmpxft_1-6_x.cudafe1.cpp" -o "x.o")";
const std::string kVariables =
    "#$ _SPACE_= \n#$ CICC_PATH=/usr/local/cuda/bin/../nvvm/bin\n#$ PATH=/usr/local/cuda/bin:/usr/bin\n"
    "#$ INCLUDES=\"-I/usr/local/cuda/include\"  \n";

std::string dryrun(const std::vector<std::string>& steps) {
  std::string t = kVariables;
  for (const auto& s : steps) t += s + "\n";
  return t;
}

TEST(nvcc_steps, FindsTheSevenStepsByRoleInAnyOrder) {
  for (const auto& order : {std::vector<std::string>{kHostPre, kCudafe, kDevicePre, kCicc, kPtxas, kFatbin, kRm, kHostCompile},
                            std::vector<std::string>{kRm, kDevicePre, kHostPre, kCudafe, kCicc, kPtxas, kFatbin, kHostCompile}}) {
    auto s = parse_dryrun(dryrun(order));
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(s->host_preprocess, kHostPre.substr(3));
    EXPECT_EQ(s->device_preprocess, kDevicePre.substr(3));
    EXPECT_EQ(s->cicc, kCicc.substr(3));
    EXPECT_EQ(s->host_compile, kHostCompile.substr(3));
    EXPECT_EQ(s->module_id_file, "/s/tmpxft_1-4_x.module_id");
    EXPECT_EQ(s->cudafe.find("--gen_module_id_file"), std::string::npos) << "cudafe++ reads the id the script writes";
  }
}

TEST(nvcc_steps, RefusesOtherShapesSayingWhy) {
  auto two_archs = parse_dryrun(dryrun({kHostPre, kCudafe, kDevicePre, kCicc, kPtxas, kCicc, kPtxas, kFatbin, kHostCompile}));
  ASSERT_FALSE(two_archs.ok());
  EXPECT_NE(two_archs.error().message.find("twice"), std::string::npos) << two_archs.error().message;
  auto device_link = parse_dryrun(dryrun({kHostPre, kCudafe, kDevicePre, kCicc, kPtxas, kFatbin, "#$ nvlink -o a.o", kHostCompile}));
  ASSERT_FALSE(device_link.ok());
  EXPECT_NE(device_link.error().message.find("nvlink"), std::string::npos) << device_link.error().message;
  auto redirected = parse_dryrun(dryrun({kHostPre, kCudafe, kDevicePre, kCicc, kPtxas + " > /s/log 2>&1", kFatbin, kHostCompile}));
  ASSERT_FALSE(redirected.ok());
  EXPECT_NE(redirected.error().message.find("redirects"), std::string::npos);
  std::string own_id = kCicc;
  own_id.replace(own_id.find("1-4_x.module_id"), 15, "9-4_x.module_id");
  EXPECT_FALSE(parse_dryrun(dryrun({kHostPre, kCudafe, kDevicePre, own_id, kPtxas, kFatbin, kHostCompile})).ok())
      << "cudafe++ and cicc must share the module id file";
  EXPECT_FALSE(parse_dryrun(dryrun({kHostPre, kCudafe, kDevicePre, kCicc, kPtxas, kFatbin})).ok()) << "no host compile";
}

TEST(nvcc_steps, ScriptWritesTheIdFirstAndHoldsTheDeviceChainsOutput) {
  auto s = parse_dryrun(dryrun({kHostPre, kCudafe, kDevicePre, kCicc, kPtxas, kFatbin, kRm, kHostCompile}));
  ASSERT_TRUE(s.ok());
  const std::string script = parallel_script(*s, "_ab12_4_x_cu_cd34", "/s");
  const auto at = [&](const std::string& what) { return script.find(what); };
  ASSERT_NE(at("export CICC_PATH='/usr/local/cuda/bin/../nvvm/bin'"), std::string::npos) << script;
  EXPECT_EQ(at("INCLUDES"), std::string::npos) << "quoted variables are already expanded in the commands";
  ASSERT_NE(at("printf '%s' '_ab12_4_x_cu_cd34' > '/s/tmpxft_1-4_x.module_id'"), std::string::npos) << script;
  EXPECT_LT(at("printf '%s'"), at("cicc"));
  EXPECT_LT(at("printf '%s'"), at("cudafe++"));
  EXPECT_NE(at("ptxas -arch=sm_90 -m64 \"/s/tmpxft_1-6_x.ptx\" -o \"/s/tmpxft_1-8_x.cubin\" && fatbinary"), std::string::npos);
  EXPECT_NE(at(") > /s/nvcc-device-chain.log 2>&1 &"), std::string::npos) << script;
  ASSERT_NE(at("then wait $device; exit 1; fi"), std::string::npos) << script;
  EXPECT_LT(at("then wait $device; exit 1"), at("cat /s/nvcc-device-chain.log"))
      << "a failed host chain ends the script before the device log is shown";
  EXPECT_LT(at("wait $device"), at("gcc -std=c++17 -c")) << "the host compile needs cicc's stub and the fatbin";
  EXPECT_NE(at("trap 'rm -f /s/nvcc-device-chain.log /s/tmpxft_1-*' EXIT"), std::string::npos) << script;
  EXPECT_LT(at("trap"), at("printf '%s'")) << "temporaries go however the script ends";
}

TEST(nvcc_steps, AFailedHostChainLeavesNoTemporaryBehind) {
  // The device chain is still writing when the host chain fails (0.1 s in, the device step at 0.3 s): the script must outlive it, or
  // the trap removes the temporaries before the device step writes its own (seen in CI with cicc).
  auto dir = common::make_temp_dir(std::filesystem::temp_directory_path(), "nvcc-steps-test-");
  ASSERT_TRUE(dir.ok()) << dir.error().message;
  const std::string d = dir->string();
  Steps s;
  s.module_id_file = d + "/tmpxft_1-4_x.module_id";
  s.device_preprocess = "true";
  s.cicc = "/bin/sh -c 'sleep 0.3; touch " + d + "/tmpxft_1-6_x.lgenfe.bc'";  // one process, as cicc is
  s.ptxas = "true";
  s.fatbinary = "true";
  s.host_preprocess = "sleep 0.1; echo 'x.cu(3): error: identifier \"oops\" is undefined'";
  s.cudafe = "false";
  s.host_compile = "true";
  common::RunLimits limits;
  limits.own_process_group = false;  // no group kill when the script ends: the script alone must see to it
  auto run = common::run_process({"/bin/sh", "-c", parallel_script(s, "_id", *dir)}, *dir, {}, limits);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->exit_code, 1);
  EXPECT_NE(run->output.find("oops"), std::string::npos) << run->output;
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // longer than the device step
  for (const auto& f : std::filesystem::directory_iterator(*dir)) ADD_FAILURE() << "left behind: " << f.path();
  (void)common::remove_tree(*dir);
}

}  // namespace
}  // namespace kernelrl::compile::nvcc_steps
