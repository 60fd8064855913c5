// The libtorch side of the decode attention kernel: shape and layout checks, scratch buffers, the
// launch on the current stream.
#include "model/decode_attention.hpp"

#include <atomic>
#include <cmath>

#include <torch/torch.h>

#if KERNELRL_CUDA_KERNELS
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "model/decode_attention_kernel.hpp"
#endif

namespace kernelrl::model {
namespace {

std::atomic<bool> g_enabled{true};

bool aligned16(const torch::Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 16 == 0; }

}  // namespace

#if KERNELRL_CUDA_KERNELS
bool decode_kernel_built() { return true; }
#else
bool decode_kernel_built() { return false; }
#endif

void set_decode_kernel_enabled(bool enabled) { g_enabled.store(enabled); }
bool decode_kernel_enabled() { return g_enabled.load(); }

bool decode_attention_applies(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& allowed) {
  if (!decode_kernel_built() || !decode_kernel_enabled()) return false;
  if (!q.is_cuda() || q.dim() != 4 || k.dim() != 4 || v.dim() != 4 || q.size(1) != 1) return false;
  if (q.requires_grad() || k.requires_grad() || v.requires_grad()) return false;
  const auto dtype = q.scalar_type();
  if (dtype != torch::kFloat32 && dtype != torch::kFloat16 && dtype != torch::kBFloat16) return false;
  if (k.scalar_type() != dtype || v.scalar_type() != dtype || k.device() != q.device() || v.device() != q.device()) {
    return false;
  }
  const auto b = q.size(0), h = q.size(2), d = q.size(3), h_kv = k.size(1), l = k.size(2);
  if (d != 64 && d != 128) return false;
  if (k.size(0) != b || k.size(3) != d || v.sizes() != k.sizes() || v.strides() != k.strides() || l == 0) return false;
  if (h_kv == 0 || h % h_kv != 0 || h / h_kv > 8 || b > 65535) return false;
  // 16-byte vector loads of keys: aligned rows.
  const auto per_16_bytes = 16 / static_cast<std::int64_t>(k.element_size());
  if (q.stride(3) != 1 || k.stride(3) != 1 || !aligned16(k) || !aligned16(v)) return false;
  for (int i = 0; i < 3; ++i) {
    if (k.stride(i) % per_16_bytes != 0) return false;
  }
  if (allowed.defined()) {
    if (allowed.scalar_type() != torch::kBool || allowed.device() != q.device() || allowed.dim() != 4) return false;
    if (allowed.size(0) != b || allowed.size(1) != 1 || allowed.size(2) != 1 || allowed.size(3) != l) return false;
    if (allowed.stride(3) != 1 && l > 1) return false;
  }
  return true;
}

#if KERNELRL_CUDA_KERNELS

torch::Tensor decode_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const torch::Tensor& allowed, const torch::Tensor& last_key) {
  TORCH_CHECK(decode_attention_applies(q, k, v, allowed), "decode_attention: unsupported tensors q ", q.sizes(),
              " k ", k.sizes());
  TORCH_CHECK(!last_key.defined() || (last_key.scalar_type() == torch::kInt64 && last_key.numel() == 1 &&
                                      last_key.device() == q.device()),
              "decode_attention: last_key must be one int64 on ", q.device());
  const c10::cuda::CUDAGuard guard(q.device());
  const auto b = q.size(0), h = q.size(2), d = q.size(3), h_kv = k.size(1), l = k.size(2);
  auto out = torch::empty({b, 1, h * d}, q.options());
  const auto splits = cuda::decode_attention_splits(l);
  const auto f32 = q.options().dtype(torch::kFloat32);
  auto partial_out = torch::empty({b, h, splits, d}, f32);
  auto stats = torch::empty({2, b, h, splits}, f32);

  cuda::DecodeAttentionArgs args;
  args.q = q.data_ptr();
  args.q_stride_b = q.stride(0);
  args.q_stride_h = q.stride(2);
  args.k = k.data_ptr();
  args.v = v.data_ptr();
  args.kv_stride_b = k.stride(0);
  args.kv_stride_h = k.stride(1);
  args.kv_stride_t = k.stride(2);
  if (allowed.defined()) {
    args.key_mask = allowed.data_ptr<bool>();
    args.mask_stride_b = allowed.stride(0);
  }
  args.last_key = last_key.defined() ? last_key.data_ptr<std::int64_t>() : nullptr;
  args.n_keys = l;
  args.out = out.data_ptr();
  args.partial_out = partial_out.data_ptr<float>();
  args.partial_max = stats[0].data_ptr<float>();
  args.partial_sum = stats[1].data_ptr<float>();
  args.batch = static_cast<int>(b);
  args.n_heads = static_cast<int>(h);
  args.n_kv_heads = static_cast<int>(h_kv);
  args.head_dim = static_cast<int>(d);
  args.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  args.dtype = q.scalar_type() == torch::kFloat32   ? cuda::DType::FLOAT32
               : q.scalar_type() == torch::kFloat16 ? cuda::DType::FLOAT16
                                                    : cuda::DType::BFLOAT16;
  const char* error = cuda::launch_decode_attention(args, c10::cuda::getCurrentCUDAStream(q.device().index()).stream());
  TORCH_CHECK(error == nullptr, "decode_attention: ", error);
  return out;
}

#else

torch::Tensor decode_attention(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                               const torch::Tensor&) {
  TORCH_CHECK(false, "decode_attention: this build has no CUDA kernels");
}

#endif

}  // namespace kernelrl::model
