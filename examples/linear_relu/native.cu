// Native candidate for examples/linear_relu: 64x64 shared-memory tiled SGEMM (x @ W^T) + bias + relu.
#include <kernelrl/abi.h>
#include <cuda_runtime.h>

constexpr int BM = 64, BN = 64, BK = 16, TM = 4, TN = 4;  // 16x16 threads, 4x4 outputs each

// y[m, n] = relu(sum_k x[m, k] * w[n, k] + b[n]); x is M x K, w is N x K (nn.Linear layout).
// Tiles are stored k-major in shared memory so each thread reads its 4 rows / 4 columns as runs.
__global__ void __launch_bounds__(256) linear_relu(const float* __restrict__ x,
                                                   const float* __restrict__ w,
                                                   const float* __restrict__ bias,
                                                   float* __restrict__ y, int M, int N, int K) {
  __shared__ float As[BK][BM + 4];
  __shared__ float Bs[BK][BN + 4];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  float acc[TM][TN] = {};

  for (int k0 = 0; k0 < K; k0 += BK) {
    // 64 rows x 16 k per tile = 1024 values per matrix: 4 per thread, coalesced along k.
    for (int i = threadIdx.x; i < BM * BK; i += 256) {
      const int r = i / BK, k = i % BK;
      const int gm = m0 + r, gn = n0 + r, gk = k0 + k;
      As[k][r] = (gm < M && gk < K) ? x[(int64_t)gm * K + gk] : 0.f;
      Bs[k][r] = (gn < N && gk < K) ? w[(int64_t)gn * K + gk] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[k][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[k][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int gm = m0 + ty * TM + i;
    if (gm >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int gn = n0 + tx * TN + j;
      if (gn < N) y[(int64_t)gm * N + gn] = fmaxf(acc[i][j] + bias[gn], 0.f);
    }
  }
}

static bool is_f32(const DLTensor& t) { return t.dtype.code == kDLFloat && t.dtype.bits == 32; }

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  // inputs: x [M, K]; params (state_dict order): linear.weight [N, K], linear.bias [N].
  if (n_inputs != 1 || n_params != 2 || n_outputs != 1) return 1;
  const DLTensor &x = inputs[0], &w = params[0], &b = params[1];
  if (!is_f32(x) || !is_f32(w) || !is_f32(b) || x.ndim != 2 || w.ndim != 2 || b.ndim != 1) return 2;
  const int64_t M = x.shape[0], K = x.shape[1], N = w.shape[0];
  if (w.shape[1] != K || b.shape[0] != N) return 3;
  if (M == 0 || N == 0) return 0;
  dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((M + BM - 1) / BM));
  linear_relu<<<grid, 256, 0, (cudaStream_t)stream>>>((const float*)x.data, (const float*)w.data,
                                                      (const float*)b.data, (float*)outputs[0].data,
                                                      (int)M, (int)N, (int)K);
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}
