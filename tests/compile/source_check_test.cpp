// check_source: the static checks (size, text, entry point, forbidden headers) and the comment
// stripper they rely on.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compile/compiler.hpp"
#include "compile/python_scan.hpp"
#include "compile/source_scan.hpp"

namespace kernelrl::compile {
namespace {

using common::Format;
using common::Status;

const std::string kEntry =
    "extern \"C\" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,\n"
    "    int n_params, DLTensor* outputs, int n_outputs, void* stream) { return 0; }\n";

std::string with_entry(const std::string& head) { return head + "\n" + kEntry; }

TEST(compile_check_source, AcceptsAMinimalNativeCandidate) {
  auto r = check_source(with_entry("#include <kernelrl/abi.h>\n#include <cuda_runtime.h>"), Format::NATIVE, "candidate.cu");
  EXPECT_EQ(r.status, Status::OK) << r.message;
}

TEST(compile_check_source, EmptyAndWhitespaceOnlyAreFormatErrors) {
  auto empty = check_source("", Format::NATIVE, "candidate.cu");
  EXPECT_EQ(empty.status, Status::FORMAT_ERROR);
  EXPECT_NE(empty.message.find("empty"), std::string::npos) << empty.message;
  auto blank = check_source(" \n\t\r\n  ", Format::HOST, "candidate.cpp");
  EXPECT_EQ(blank.status, Status::FORMAT_ERROR);
  EXPECT_NE(blank.message.find("whitespace"), std::string::npos) << blank.message;
  EXPECT_EQ(check_source("\n\n", Format::KERNELBENCH, "candidate.py").status, Status::FORMAT_ERROR);
}

TEST(compile_check_source, BinaryDataIsAFormatError) {
  std::string nul = with_entry("#include <kernelrl/abi.h>");
  nul[5] = '\0';
  auto r = check_source(nul, Format::NATIVE, "candidate.cu");
  EXPECT_EQ(r.status, Status::FORMAT_ERROR);
  EXPECT_NE(r.message.find("offset 5"), std::string::npos) << r.message;

  for (std::string bad : {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xe2\x82"}) {  // stray, overlong, surrogate, cut short
    auto b = check_source(with_entry("// " + bad), Format::NATIVE, "candidate.cu");
    EXPECT_EQ(b.status, Status::FORMAT_ERROR) << "bytes not rejected";
    EXPECT_NE(b.message.find("UTF-8"), std::string::npos) << b.message;
  }
  auto utf8 = check_source(with_entry("// h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x9a\x80"), Format::NATIVE, "candidate.cu");
  EXPECT_EQ(utf8.status, Status::OK) << utf8.message;
}

TEST(compile_check_source, TooLargeNamesSizeAndLimit) {
  std::string big = with_entry("");
  big.resize(1234567, ' ');
  auto r = check_source(big, Format::NATIVE, "candidate.cu");
  EXPECT_EQ(r.status, Status::FORMAT_ERROR);
  EXPECT_EQ(r.message, "candidate.cu: 1234567 bytes, over the 1048576-byte limit");
  EXPECT_EQ(check_source(with_entry(""), Format::NATIVE, "a.cu", 10).status, Status::FORMAT_ERROR);
}

TEST(compile_check_source, MissingEntryPointNamesTheSignature) {
  auto r = check_source("#include <kernelrl/abi.h>\nextern \"C\" int kernelrl_fwd(void) { return 0; }\n", Format::NATIVE,
                        "candidate.cu");
  EXPECT_EQ(r.status, Status::FORMAT_ERROR);
  EXPECT_NE(r.message.find("extern \"C\" int kernelrl_forward(const DLTensor* inputs"), std::string::npos) << r.message;

  auto no_extern_c = check_source("int kernelrl_forward(const DLTensor*, int) { return 0; }\n", Format::HOST, "c.cpp");
  EXPECT_EQ(no_extern_c.status, Status::FORMAT_ERROR);

  auto commented = check_source("/* extern \"C\" int kernelrl_forward(...) */\n// kernelrl_forward(\nint x;\n",
                                Format::HOST, "c.cpp");
  EXPECT_EQ(commented.status, Status::FORMAT_ERROR) << "an entry point inside comments does not count";

  auto block_form = check_source("extern \"C\" {\nint kernelrl_forward (const DLTensor* i, int n, const DLTensor* p, int np,"
                                 " DLTensor* o, int no, void* s) { return 0; }\n}\n",
                                 Format::HOST, "c.cpp");
  EXPECT_EQ(block_form.status, Status::OK) << block_form.message;
}

class compile_forbidden_include : public ::testing::TestWithParam<std::string> {};

TEST_P(compile_forbidden_include, IsRejectedWithTheHeaderAndLineNamed) {
  const std::string& header = GetParam();
  std::string source = with_entry("#include <kernelrl/abi.h>\n#include <cuda_runtime.h>\n#include <" + header + ">");
  for (Format format : {Format::NATIVE, Format::HOST}) {
    auto r = check_source(source, format, "candidate.cu");
    EXPECT_EQ(r.status, Status::REJECTED) << header;
    EXPECT_NE(r.message.find("candidate.cu:3:"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("<" + header + ">"), std::string::npos) << r.message;
  }
}

INSTANTIATE_TEST_SUITE_P(headers, compile_forbidden_include,
                         ::testing::Values("torch/extension.h", "ATen/ATen.h", "c10/cuda/CUDAStream.h",
                                           "caffe2/core/common.h", "pybind11/pybind11.h", "Python.h",
                                           "python3.11/Python.h", "cublas_v2.h", "cublasLt.h", "cudnn.h",
                                           "cufft.h", "cusolverDn.h", "cusparse.h", "nccl.h", "curand.h",
                                           "/usr/include/stdio.h", "../secret.h", "cuda/../../torch/all.h",
                                           "./torch/extension.h", "TORCH/extension.h"));

class compile_allowed_include : public ::testing::TestWithParam<std::string> {};

TEST_P(compile_allowed_include, Passes) {
  auto r = check_source(with_entry("#include <" + GetParam() + ">"), Format::NATIVE, "candidate.cu");
  EXPECT_EQ(r.status, Status::OK) << r.message;
}

INSTANTIATE_TEST_SUITE_P(headers, compile_allowed_include,
                         ::testing::Values("kernelrl/abi.h", "cuda_runtime.h", "cuda.h", "cuda_fp16.h", "cuda_bf16.h",
                                           "cuda_fp8.h", "mma.h", "cooperative_groups.h",
                                           "cooperative_groups/reduce.h", "cuda/pipeline", "cuda/barrier",
                                           "cub/cub.cuh", "cuda_pipeline.h", "cuda_awbarrier.h",
                                           "device_launch_parameters.h", "curand_kernel.h", "vector", "cmath",
                                           "stdint.h", "math.h", "algorithm"));

TEST(compile_check_source, CommentedOutIncludesDoNotCount) {
  std::string source = with_entry(
      "#include <kernelrl/abi.h>\n"
      "// #include <torch/extension.h>\n"
      "/* #include <cublas_v2.h> */\n"
      "/*\n#include <cudnn.h>\n*/\n"
      "const char* s = \"#include <ATen/ATen.h>\";  // // */ \n"
      "const char* r = R\"x(\n#include <pybind11/pybind11.h>\n)x\";\n"
      "int n = 1'000'000;\n");
  auto r = check_source(source, Format::NATIVE, "candidate.cu");
  EXPECT_EQ(r.status, Status::OK) << r.message;
}

TEST(compile_check_source, IncludesHiddenFromANaiveScanAreFound) {
  const std::string hidden[] = {
      "#inc\\\nlude <torch/extension.h>",           // line splice inside the directive
      "# /* gap */ include <cudnn.h>",              // comment between # and include
      "%:include <cublas_v2.h>",                    // digraph for #
      "#include_next <cublas_v2.h>",                // include_next
      "#define H <torch/extension.h>\n#include H",  // computed include
      "auto c = L'/*';\n#include <cublas_v2.h>\n// */",  // prefixed char literal that holds /*
      "auto s = u8\"/*\";\n#include <cufft.h>\n// */",   // prefixed string that holds /*
      "int x = 0x1'f; /* x */\n#include <nccl.h>",       // digit separators
  };
  for (const std::string& h : hidden) {
    auto r = check_source(with_entry("#include <kernelrl/abi.h>\n" + h), Format::NATIVE, "candidate.cu");
    EXPECT_EQ(r.status, Status::REJECTED) << h << "\n-> " << r.message;
  }
}

TEST(compile_check_source, RejectionReportsTheOriginalLineAfterSplices) {
  std::string source = with_entry("#include <kernelrl/abi.h>\n#define A 1 \\\n  + 2\n\n#include <cublas_v2.h>");
  auto r = check_source(source, Format::HOST, "k.cpp");
  ASSERT_EQ(r.status, Status::REJECTED);
  EXPECT_NE(r.message.find("k.cpp:5:"), std::string::npos) << r.message;
}

TEST(compile_check_source, KernelbenchNeedsClassModelNew) {
  auto missing = check_source("import torch\nclass Model(torch.nn.Module):\n    pass\n", Format::KERNELBENCH, "c.py");
  EXPECT_EQ(missing.status, Status::FORMAT_ERROR);
  EXPECT_NE(missing.message.find("class ModelNew"), std::string::npos) << missing.message;
  EXPECT_EQ(check_source("# class ModelNew(nn.Module)\nx = 1\n", Format::KERNELBENCH, "c.py").status, Status::FORMAT_ERROR);
  EXPECT_EQ(check_source("class ModelNewer:\n    pass\n", Format::KERNELBENCH, "c.py").status, Status::FORMAT_ERROR);
  // kernelbench candidates build through torch: torch headers inside load_inline strings are fine.
  auto ok = check_source("src = '#include <torch/extension.h>'\nclass ModelNew(nn.Module):\n    pass\n",
                         Format::KERNELBENCH, "c.py");
  EXPECT_EQ(ok.status, Status::OK) << ok.message;
}

// The kernelbench format rules: no try/except, no use of the reference class; code inside
// strings (load_inline sources) and comments never counts.
TEST(compile_check_source, KernelbenchRejectsFallbacksAndTheReferenceClass) {
  const std::string head = "import torch\nimport torch.nn as nn\n";
  auto rejected = [&](const std::string& body, int line, const std::string& what) {
    auto r = check_source(head + body, Format::KERNELBENCH, "c.py");
    EXPECT_EQ(r.status, Status::REJECTED) << body;
    EXPECT_NE(r.message.find("c.py:" + std::to_string(line) + ":"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find(what), std::string::npos) << r.message;
  };
  const std::string model_new = "class ModelNew(nn.Module):\n    def forward(self, x):\n";
  rejected(model_new + "        try:\n            return ext.f(x)\n        except Exception:\n"
                       "            return torch.softmax(x, 1)\n",
           5, "try/except");
  rejected("try :\n    import ext\nexcept ImportError:\n    ext = None\n" + model_new + "        return x\n", 3,
           "try/except");
  rejected("class Model(nn.Module):\n    pass\nclass ModelNew(Model):\n    pass\n", 5, "inherits");
  rejected("class ModelNew(\n    torch.nn.Module,\n    task.Model,\n):\n    pass\n", 5, "inherits");
  rejected(model_new + "        return Model()(x)\n", 5, "reference class Model is used");
  rejected(model_new + "        return Model.forward(self, x)\n", 5, "reference class Model is used");

  auto ok = [&](const std::string& body) {
    auto r = check_source(head + body, Format::KERNELBENCH, "c.py");
    EXPECT_EQ(r.status, Status::OK) << body << "\n" << r.message;
  };
  ok("cuda_src = \"\"\"\ntry: not python\nModel(1); class ModelNew(Model) {}\n\"\"\"\n" + model_new +
     "        return x  # try: Model()\n");
  ok("s = r'try:' + \"Model(\" + b'Model.x'\n" + model_new + "        return x\n");
  ok("class Model(nn.Module):\n    pass\n" + model_new + "        entry = retry(x)\n        return torch.nn.Model\n");
  ok(model_new + "        return self.telemetry(x) if isinstance(x, Model) else x\n");
}

// No threads, processes or CUDA streams of its own: the timer's end mark would not wait for them.
TEST(compile_check_source, KernelbenchRejectsThreadsProcessesAndStreams) {
  const std::string head = "import torch\nimport torch.nn as nn\n";
  const std::string model_new = "class ModelNew(nn.Module):\n    def forward(self, x):\n";
  auto status_of = [&](const std::string& body) { return check_source(head + body, Format::KERNELBENCH, "c.py"); };
  for (const std::string& body : {"import threading\n" + model_new + "        return x\n",
                                  "from concurrent.futures import ThreadPoolExecutor\n" + model_new + "        return x\n",
                                  "import multiprocessing as mp\n" + model_new + "        return x\n",
                                  model_new + "        s = torch.cuda.Stream()\n        return x\n",
                                  model_new + "        with torch.cuda.stream(self.s):\n            return x\n"}) {
    auto r = status_of(body);
    EXPECT_EQ(r.status, Status::REJECTED) << body;
    EXPECT_TRUE(r.message.find("thread") != std::string::npos || r.message.find("stream") != std::string::npos)
        << r.message;
  }
  auto streams = status_of(model_new + "        s = torch.cuda.Stream()\n        return x\n");
  EXPECT_NE(streams.message.find("c.py:5:"), std::string::npos) << streams.message;
  // The current stream, and the words inside strings and comments, are fine.
  EXPECT_EQ(status_of(model_new + "        s = torch.cuda.current_stream()  # not threading\n        return x\n").status,
            Status::OK);
  EXPECT_EQ(status_of("src = 'cudaStream_t stream; threading'\n" + model_new + "        return ext.f(x, stream=0)\n").status,
            Status::OK);
}

// No way to the process itself: only torch and the pure-computation standard library are imported,
// and the modules, built-ins and dunders that reach descriptors or the interpreter's objects are
// refused even as attributes (torch.os is the os module).
TEST(compile_check_source, KernelbenchRejectsRoutesToTheProcess) {
  const std::string head = "import torch\nimport torch.nn as nn\n";
  const std::string model_new = "class ModelNew(nn.Module):\n    def forward(self, x):\n";
  auto check = [&](const std::string& body) { return check_source(head + body, Format::KERNELBENCH, "c.py"); };
  struct Case {
    std::string body;
    int line;
    std::string what;
  };
  const std::vector<Case> rejected{
      {"import os\n" + model_new + "        return x\n", 3, "module `os` is imported"},
      {"import math, sys as s\n" + model_new + "        return x\n", 3, "module `sys` is imported"},
      {"from ctypes import CDLL\n" + model_new + "        return x\n", 3, "module `ctypes` is imported"},
      {"x = 1; import socket\n" + model_new + "        return x\n", 3, "module `socket` is imported"},
      {"from . import helper\n" + model_new + "        return x\n", 3, "relative import"},
      {"import numpy as np\n" + model_new + "        return x\n", 3, "module `numpy` is imported"},
      {model_new + "        torch.hub.load('.', 'm', source='local')\n        return x\n", 5, "`hub` is used"},
      {model_new + "        return typing.get_type_hints(f)\n", 5, "`get_type_hints` is used"},
      {model_new + "        return torch.utils.cpp_extension.tempfile._os\n", 5, "`_os` is used"},
      {model_new + "        torch.os.write(3, b'{}')\n        return x\n", 5, "`os` is used"},
      {model_new + "        return torch.utils.cpp_extension.sys.modules\n", 5, "`sys` is used"},
      {model_new + "        return [c for c in object.__subclasses__()]\n", 5, "`__subclasses__` is used"},
      {model_new + "        return getattr(torch, 'o' + 's')\n", 5, "built-in `getattr`"},
      {model_new + "        return open('/tmp/x', 'w')\n", 5, "built-in `open`"},
      {model_new + "        return eval ('x')\n", 5, "built-in `eval`"},
  };
  for (const auto& c : rejected) {
    auto r = check(c.body);
    EXPECT_EQ(r.status, Status::REJECTED) << c.body;
    EXPECT_NE(r.message.find("c.py:" + std::to_string(c.line) + ":"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find(c.what), std::string::npos) << r.message;
  }
  for (const std::string& body : std::vector<std::string>{
       "import math\nimport torch.nn.functional as F\nfrom torch.utils.cpp_extension import load_inline\n"
        "from typing import List\n" + model_new + "        return F.relu(x)\n",
        model_new + "        y = self.eval()\n        f = torch.compile\n        return x.open\n",  // methods
        "class ModelNew(nn.Module):\n    def forward(self, input):\n        return input\n"
        "    def compile(self):\n        return None\n",
        "src = 'import os; os.write(3, buf)'  # open(), getattr, sys\n" + model_new + "        return x\n",
        model_new + "        position = x.important  # words containing os or sys\n        return x\n"}) {
    auto r = check(body);
    EXPECT_EQ(r.status, Status::OK) << body << "\n" << r.message;
  }
}

TEST(compile_python_scan, BlanksStringsAndCommentsKeepingLines) {
  EXPECT_EQ(detail::blank_python_literals("a = 'x#y' # c\nb = \"\"\"p\nq\"\"\" + f\"{z}\""),
            "a = '   '    \nb = \"\"\" \n \"\"\" + f\"   \"");
  EXPECT_EQ(detail::blank_python_literals("s = 'a\\'b' + \"c"), "s = '    ' + \" ");  // escape; unterminated
  EXPECT_EQ(detail::blank_python_literals("rb'x' br\"y\" xr'z'"), "rb' ' br\" \" xr'z'");  // xr is no prefix
}

TEST(compile_strip_comments, KeepsLineNumbersAndLiterals) {
  std::string out = detail::strip_comments("a /* x\ny */ b // c\n\"// d\" '/*' e\\\nf\ng");
  EXPECT_EQ(out, "a  \n b  \n\"// d\" '/*' ef\n\ng");
}

// The ladder's files say what they expect; the statically decidable outcomes must come from here.
TEST(compile_check_source, AgreesWithTheLadder) {
  namespace fs = std::filesystem;
  fs::path ladder = fs::path(KERNELRL_SOURCE_DIR) / "tests" / "ladder";
  if (!fs::is_directory(ladder)) GTEST_SKIP() << "no ladder at " << ladder;
  int n_checked = 0;
  for (const auto& dir : {"native", "host", "kernelbench"}) {
    if (!fs::is_directory(ladder / dir)) continue;
    for (const auto& file : fs::directory_iterator(ladder / dir)) {
      std::ifstream in(file.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      std::string text = ss.str();
      auto format = common::format_from_extension(file.path().string());
      if (!format) continue;
      std::size_t at = text.find("expect: ");
      std::string expect = at == std::string::npos ? "FORMAT_ERROR"  // e.g. an empty file
                                                   : text.substr(at + 8, text.find('\n', at) - at - 8);
      auto r = check_source(text, *format, file.path().filename().string());
      if (expect == "REJECTED" || expect == "FORMAT_ERROR") {
        EXPECT_EQ(common::to_string(r.status), expect) << file.path() << ": " << r.message;
      } else {
        EXPECT_EQ(r.status, Status::OK) << file.path() << ": " << r.message;
      }
      ++n_checked;
    }
  }
  EXPECT_GT(n_checked, 0);
}


// Lazy outputs and interception (both rule sets): tensor subclasses, dispatch and function modes,
// global module hooks. Honest code with the same words inside strings or as ordinary names passes.
TEST(compile_check_source, KernelbenchRejectsTensorSubclassesModesAndGlobalHooks) {
  const std::string head = "import torch\nimport torch.nn as nn\n";
  const std::string model_new = "class ModelNew(nn.Module):\n    def forward(self, x):\n";
  for (common::RuleSet rules : {common::RuleSet::STRICT, common::RuleSet::KERNELBENCH}) {
    auto check = [&](const std::string& body) {
      return check_source(head + body, Format::KERNELBENCH, "c.py", kMaxSourceBytes, true, rules);
    };
    for (const std::string& body : std::vector<std::string>{
             "class Lazy(torch.Tensor):\n    pass\n" + model_new + "        return x\n",
             "from torch import Tensor\nclass Lazy(Tensor):\n    pass\n" + model_new + "        return x\n",
             model_new + "        return torch.Tensor._make_subclass(Lazy, x)\n",
             "from torch.overrides import TorchFunctionMode\n" + model_new + "        return x\n",
             "from torch.utils._python_dispatch import TorchDispatchMode\n" + model_new + "        return x\n",
             "torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: i[0])\n" + model_new +
                 "        return x\n",
             model_new + "        torch.nn.modules.module._global_forward_hooks[0] = None\n        return x\n"}) {
      auto r = check(body);
      EXPECT_EQ(r.status, Status::REJECTED) << to_string(rules) << "\n" << body;
      EXPECT_TRUE(r.message.find("subclass") != std::string::npos || r.message.find("hook") != std::string::npos)
          << r.message;
    }
  }
  auto ok = check_source(head + "src = 'class T(torch.Tensor) {}; __torch_dispatch__'\n" + model_new +
                             "        hooks = self.overrides_count if False else x  # a TorchDispatchMode word\n"
                             "        return hooks\n",
                         Format::KERNELBENCH, "c.py");
  EXPECT_EQ(ok.status, Status::OK) << ok.message;
}

// KernelBench's rule set asks for a kernel of the candidate's own; strict leaves that to the
// operator audit at run time (a candidate of PyTorch operators alone is REJECTED there).
TEST(compile_check_source, KernelbenchRulesNeedAKernelOfTheCandidatesOwn) {
  const std::string torch_only =
      "import torch\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
      "        return torch.relu(x)\n";
  const std::string with_kernel =
      "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
      "src = '__global__ void k(float* x) {}'\next = load_inline(name='e', cpp_sources='', cuda_sources=src)\n"
      "class ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(ext.f(x))\n";
  const std::string cpu_kernel =
      "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
      "ext = load_inline(name='e', cpp_sources='torch::Tensor f(torch::Tensor x) { return x; }', functions=['f'])\n"
      "class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.f(x)\n";
  auto kb = [](const std::string& s) {
    return check_source(s, Format::KERNELBENCH, "c.py", kMaxSourceBytes, true, common::RuleSet::KERNELBENCH);
  };
  auto refused = kb(torch_only);
  EXPECT_EQ(refused.status, Status::REJECTED);
  EXPECT_NE(refused.message.find("load_inline"), std::string::npos) << refused.message;
  EXPECT_EQ(kb(with_kernel).status, Status::OK) << kb(with_kernel).message;
  EXPECT_EQ(kb(cpu_kernel).status, Status::OK) << kb(cpu_kernel).message;
  const std::string no_global = "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
                                "ext = load_inline(name='e', cuda_sources='void f() {}')\n"
                                "class ModelNew(nn.Module):\n    def forward(self, x):\n        return x\n";
  EXPECT_NE(kb(no_global).message.find("no kernel"), std::string::npos) << kb(no_global).message;
  EXPECT_EQ(check_source(torch_only, Format::KERNELBENCH, "c.py").status, Status::OK);  // strict: audited at run time
}

TEST(common_rule_set, NamesRoundTripAndUnknownNamesAreRefused) {
  for (auto r : {common::RuleSet::STRICT, common::RuleSet::KERNELBENCH}) {
    EXPECT_EQ(common::parse_rule_set(common::to_string(r)), r);
  }
  EXPECT_FALSE(common::parse_rule_set("Strict").has_value());
  EXPECT_FALSE(common::parse_rule_set("").has_value());
}

// What the compiler would read for the candidate: assembler directives that pull a file into the
// build (the file's text then comes back in the library or an error message), and, in kernelbench
// sources, #includes by absolute or climbing path. Every format; honest spellings pass.
TEST(compile_check_source, FileReadingDirectivesAndPathsAreRejected) {
  const std::string native_head = "#include <kernelrl/abi.h>\n";
  const std::string entry =
      "extern \"C\" int kernelrl_forward(const DLTensor*, int, const DLTensor*, int, DLTensor*, int, void*) {\n"
      "  return 0;\n}\n";
  auto native = check_source(native_head + "asm(\".incbin \\\"/etc/passwd\\\"\");\n" + entry, Format::NATIVE, "c.cu");
  EXPECT_EQ(native.status, Status::REJECTED);
  EXPECT_NE(native.message.find("c.cu:2: the assembler directive .incbin"), std::string::npos) << native.message;
  EXPECT_EQ(check_source(native_head + "__asm__(\"  .INCLUDE \\\"x.s\\\"\");\n" + entry, Format::HOST, "c.cpp").status,
            Status::REJECTED);
  EXPECT_EQ(check_source(native_head + "struct S { int include; };\nint f(S s) { return s.include; }\n" + entry,
                         Format::HOST, "c.cpp").status,
            Status::OK);

  const std::string model_new = "class ModelNew(nn.Module):\n    def forward(self, x):\n        return x\n";
  auto kb = [&](const std::string& cuda) {
    return check_source("import torch\nimport torch.nn as nn\nsrc = r'''\n" + cuda + "\n'''\n" + model_new,
                        Format::KERNELBENCH, "c.py");
  };
  EXPECT_EQ(kb("#include </etc/passwd>").status, Status::REJECTED);
  auto climbing = kb("#include \"../../../etc/shadow\"");
  EXPECT_EQ(climbing.status, Status::REJECTED);
  EXPECT_NE(climbing.message.find("c.py:4: #include"), std::string::npos) << climbing.message;
  EXPECT_EQ(kb("__asm__(\".incbin \\\"/proc/self/environ\\\"\");").status, Status::REJECTED);
  // #embed (C23, C++26; GCC 15, Clang 19) pulls a file's bytes into an initializer.
  auto embed = check_source(native_head + "static const char data[] = {\n  #embed \"/etc/passwd\"\n};\n" + entry,
                            Format::NATIVE, "c.cu");
  EXPECT_EQ(embed.status, Status::REJECTED);
  EXPECT_NE(embed.message.find("c.cu:3: #embed is not allowed"), std::string::npos) << embed.message;
  EXPECT_EQ(check_source(native_head + "%:embed <abi.h>\n" + entry, Format::HOST, "c.cpp").status, Status::REJECTED);
  EXPECT_EQ(kb("const char d[] = {\n#embed \"x.bin\"\n};").status, Status::REJECTED);
  EXPECT_EQ(check_source("import torch\nimport torch.nn as nn\n# embed the bias in the kernel\nsrc = r'''\n"
                         "#include <torch/extension.h>\n'''\n" + model_new, Format::KERNELBENCH, "c.py").status,
            Status::OK);
  auto honest = kb("#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>\n#include \"cub/cub.cuh\"\n"
                   "#include <c10/cuda/CUDAGuard.h>");
  EXPECT_EQ(honest.status, Status::OK) << honest.message;
}
}  // namespace
}  // namespace kernelrl::compile
