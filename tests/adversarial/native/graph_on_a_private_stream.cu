// expect: OK
// Honest control (native) for streams of a candidate's own: the softmax captured once as a CUDA
// graph on a private non-blocking stream, then launched on the given stream every call, the common
// honest way to cut launch overhead. The graph's one kernel node takes the call's input and output
// pointers (they change between calls: fresh inputs, poisoned outputs) through
// cudaGraphExecKernelNodeSetParams before each launch; rows and columns are updated the same way.
// Must stay OK: native candidates may create streams (compile/import_check.cpp), the launch record
// knows a graph's kernel as the candidate's own, and the graph runs on the given stream, so the
// child's end mark waits for it.
#include <kernelrl/abi.h>
#include <cuda_runtime.h>
#include <math.h>

constexpr int kThreads = 256;

// Block-wide reduction: shuffle inside each warp, then the first warp reduces the warp results.
template <bool kMax>
__device__ float block_reduce(float v, float* scratch) {
  for (int off = 16; off > 0; off >>= 1) {
    const float o = __shfl_xor_sync(0xffffffffu, v, off);
    v = kMax ? fmaxf(v, o) : v + o;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < kThreads / 32 ? scratch[lane] : (kMax ? -INFINITY : 0.f);
  for (int off = 16; off > 0; off >>= 1) {
    const float o = __shfl_xor_sync(0xffffffffu, v, off);
    v = kMax ? fmaxf(v, o) : v + o;
  }
  __syncthreads();  // scratch is reused by the next reduction
  return v;
}

__global__ void softmax_block_per_row(const float* __restrict__ x, float* __restrict__ y,
                                      int64_t cols) {
  __shared__ float scratch[32];
  const float* xr = x + (int64_t)blockIdx.x * cols;
  float* yr = y + (int64_t)blockIdx.x * cols;
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) m = fmaxf(m, xr[c]);
  m = block_reduce<true>(m, scratch);
  float s = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) s += expf(xr[c] - m);
  s = block_reduce<false>(s, scratch);
  const float inv = 1.f / s;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) yr[c] = expf(xr[c] - m) * inv;
}

namespace {

// The captured graph, its executable form and its kernel node; made on the first call. The graph is
// kept: the node handle that cudaGraphExecKernelNodeSetParams takes belongs to it (with the graph
// destroyed the update fails with "invalid argument", seen on the H200).
struct CapturedSoftmax {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaGraphNode_t node = nullptr;
};

// Captures one launch of the kernel on a private stream (capture records it, nothing runs).
bool capture(CapturedSoftmax& g, const float* x, float* y, int64_t rows, int64_t cols) {
  cudaStream_t capture_stream = nullptr;
  if (cudaStreamCreateWithFlags(&capture_stream, cudaStreamNonBlocking) != cudaSuccess) return false;
  bool ok = cudaStreamBeginCapture(capture_stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
  if (ok) softmax_block_per_row<<<(unsigned)rows, kThreads, 0, capture_stream>>>(x, y, cols);
  ok = cudaStreamEndCapture(capture_stream, &g.graph) == cudaSuccess && ok;
  size_t n_nodes = 1;
  ok = ok && cudaGraphGetNodes(g.graph, &g.node, &n_nodes) == cudaSuccess && n_nodes == 1;
  ok = ok && cudaGraphInstantiateWithFlags(&g.exec, g.graph, 0) == cudaSuccess;
  cudaStreamDestroy(capture_stream);
  return ok;
}

}  // namespace

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  const float* x = (const float*)inputs[0].data;
  float* y = (float*)outputs[0].data;
  static CapturedSoftmax g;
  if (!g.exec && !capture(g, x, y, rows, cols)) return 2;
  // This call's pointers and sizes into the graph's node (the node keeps copies of the arguments).
  // Spelt out in full; the function must stay the one captured.
  void* args[] = {(void*)&x, (void*)&y, (void*)&cols};
  cudaKernelNodeParams p{};
  p.func = (void*)softmax_block_per_row;
  p.gridDim = dim3((unsigned)rows);
  p.blockDim = dim3(kThreads);
  p.sharedMemBytes = 0;
  p.kernelParams = args;
  p.extra = nullptr;
  if (cudaGraphExecKernelNodeSetParams(g.exec, g.node, &p) != cudaSuccess) return 3;
  if (cudaGraphLaunch(g.exec, (cudaStream_t)stream) != cudaSuccess) return 4;
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
