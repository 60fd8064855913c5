// CUDA graphs of a candidate's own kernels, the honest ways: captured on a private stream and
// launched on the given one, captured on the given stream, and built node by node. A second
// translation unit, so the library's .nv_fatbin section holds more than one fatbin container.
// Every function returns a cudaError_t (0: success) and waits for the graph it launched.
#include <cuda_runtime.h>

template <int kAdd>
__global__ void add_constant_kernel(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += static_cast<float>(kAdd);
}

extern "C" __global__ void add_one_kernel(float* x, int n);  // audit_test_kernels.cu

namespace {

int blocks(int n) { return (n + 255) / 256; }

// Captures two launches of this file's kernel on `capture`, then launches the graph on `given`.
cudaError_t capture_and_launch(cudaStream_t capture, cudaStream_t given, float* x, int n) {
  cudaError_t e = cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) return e;
  add_constant_kernel<2><<<blocks(n), 256, 0, capture>>>(x, n);
  add_constant_kernel<3><<<blocks(n), 256, 0, capture>>>(x, n);
  const cudaError_t launched = cudaGetLastError();
  cudaGraph_t graph = nullptr;
  e = cudaStreamEndCapture(capture, &graph);
  if (e == cudaSuccess) e = launched;
  cudaGraphExec_t exec = nullptr;
  if (e == cudaSuccess) e = cudaGraphInstantiate(&exec, graph, 0);
  if (e == cudaSuccess) e = cudaGraphLaunch(exec, given);
  if (e == cudaSuccess) e = cudaStreamSynchronize(given);
  if (exec != nullptr && cudaGraphExecDestroy(exec) != cudaSuccess && e == cudaSuccess) e = cudaErrorUnknown;
  if (graph != nullptr && cudaGraphDestroy(graph) != cudaSuccess && e == cudaSuccess) e = cudaErrorUnknown;
  return e;
}

}  // namespace

extern "C" int audit_test_private_stream_graph(float* x, int n, cudaStream_t given) {
  cudaStream_t capture = nullptr;
  cudaError_t e = cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking);
  if (e != cudaSuccess) return static_cast<int>(e);
  e = capture_and_launch(capture, given, x, n);
  const cudaError_t destroyed = cudaStreamDestroy(capture);
  return static_cast<int>(e != cudaSuccess ? e : destroyed);
}

extern "C" int audit_test_given_stream_graph(float* x, int n, cudaStream_t given) {
  return static_cast<int>(capture_and_launch(given, given, x, n));
}

// One kernel node (add_one_kernel) added with cudaGraphAddKernelNode, launched on `given`.
extern "C" int audit_test_node_graph(float* x, int n, cudaStream_t given) {
  cudaGraph_t graph = nullptr;
  cudaError_t e = cudaGraphCreate(&graph, 0);
  if (e != cudaSuccess) return static_cast<int>(e);
  void* args[] = {&x, &n};
  cudaKernelNodeParams params = {};
  params.func = reinterpret_cast<void*>(add_one_kernel);
  params.gridDim = dim3(blocks(n));
  params.blockDim = dim3(256);
  params.kernelParams = args;
  cudaGraphNode_t node = nullptr;
  e = cudaGraphAddKernelNode(&node, graph, nullptr, 0, &params);
  cudaGraphExec_t exec = nullptr;
  if (e == cudaSuccess) e = cudaGraphInstantiate(&exec, graph, 0);
  if (e == cudaSuccess) e = cudaGraphLaunch(exec, given);
  if (e == cudaSuccess) e = cudaStreamSynchronize(given);
  if (exec != nullptr && cudaGraphExecDestroy(exec) != cudaSuccess && e == cudaSuccess) e = cudaErrorUnknown;
  if (cudaGraphDestroy(graph) != cudaSuccess && e == cudaSuccess) e = cudaErrorUnknown;
  return static_cast<int>(e);
}
