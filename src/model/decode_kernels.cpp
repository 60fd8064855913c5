// The libtorch side of the decoding kernels: shape and layout checks, scratch buffers, launches on
// the current stream.
#include "model/decode_kernels.hpp"

#include <atomic>
#include <cmath>
#include <mutex>
#include <tuple>

#include <torch/torch.h>

#if KERNELRL_CUDA_KERNELS
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "model/rope_store_kernel.hpp"
#include "model/sample_kernel.hpp"
#include "model/swiglu_kernel.hpp"
#endif

#include "model/decode_attention_kernel.hpp"  // raw-pointer limits, usable without CUDA
#include "model/kv_cache.hpp"

namespace kernelrl::model {
namespace {

std::atomic<bool> g_enabled{true};

bool aligned16(const torch::Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 16 == 0; }

bool float_dtype(torch::ScalarType t) {
  return t == torch::kFloat32 || t == torch::kFloat16 || t == torch::kBFloat16;
}

// A rope table usable by the kernel: [B or 1, T, 1, D] in `like`'s dtype, D contiguous.
bool rope_table_fits(const torch::Tensor& table, std::int64_t b, std::int64_t t, std::int64_t d,
                     const torch::Tensor& like) {
  return table.defined() && table.scalar_type() == like.scalar_type() && table.device() == like.device() &&
         table.dim() == 4 && (table.size(0) == b || table.size(0) == 1) && table.size(1) == t && table.size(2) == 1 &&
         table.size(3) == d && table.stride(3) == 1;
}

#if KERNELRL_CUDA_KERNELS
cuda::DType kernel_dtype(torch::ScalarType t) {
  return t == torch::kFloat32 ? cuda::DType::FLOAT32 : t == torch::kFloat16 ? cuda::DType::FLOAT16 : cuda::DType::BFLOAT16;
}
#endif

}  // namespace

#if KERNELRL_CUDA_KERNELS
bool decode_kernels_built() { return true; }
#else
bool decode_kernels_built() { return false; }
#endif

void set_decode_kernels_enabled(bool enabled) { g_enabled.store(enabled); }
bool decode_kernels_enabled() { return g_enabled.load(); }

bool decode_attention_applies(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& allowed) {
  if (!decode_kernels_built() || !decode_kernels_enabled()) return false;
  if (!q.is_cuda() || q.dim() != 4 || k.dim() != 4 || v.dim() != 4 || q.size(1) != 1) return false;
  if (q.requires_grad() || k.requires_grad() || v.requires_grad()) return false;
  const auto dtype = q.scalar_type();
  if (!float_dtype(dtype)) return false;
  if (k.scalar_type() != dtype || v.scalar_type() != dtype || k.device() != q.device() || v.device() != q.device()) {
    return false;
  }
  const auto b = q.size(0), h = q.size(2), d = q.size(3), h_kv = k.size(1), l = k.size(2);
  if (!cuda::decode_head_dim_supported(d)) return false;
  if (k.size(0) != b || k.size(3) != d || v.sizes() != k.sizes() || v.strides() != k.strides() || l == 0) return false;
  if (h_kv == 0 || h % h_kv != 0 || h / h_kv > cuda::kDecodeMaxGroup || b > 65535) return false;
  // 16-byte vector loads of keys: aligned rows.
  const auto per_16_bytes = 16 / static_cast<std::int64_t>(k.element_size());
  if (q.stride(3) != 1 || k.stride(3) != 1 || !aligned16(q) || !aligned16(k) || !aligned16(v)) return false;
  for (int i = 0; i < 3; ++i) {
    if (k.stride(i) % per_16_bytes != 0) return false;
  }
  if (q.stride(0) % per_16_bytes != 0 || q.stride(2) % per_16_bytes != 0) return false;
  if (allowed.defined()) {
    if (allowed.scalar_type() != torch::kBool || allowed.device() != q.device() || allowed.dim() != 4) return false;
    if (allowed.size(0) != b || allowed.size(1) != 1 || allowed.size(2) != 1 || allowed.size(3) != l) return false;
    if (allowed.stride(3) != 1 && l > 1) return false;
  }
  return true;
}

bool rope_store_applies(const torch::Tensor& qkv, const Rope& rope, const KvCache& cache, std::int64_t n_heads,
                        std::int64_t n_kv_heads, std::int64_t head_dim) {
  if (!decode_kernels_built() || !decode_kernels_enabled()) return false;
  if (!qkv.is_cuda() || !float_dtype(qkv.scalar_type()) || qkv.requires_grad() || qkv.dim() != 3) return false;
  const auto b = qkv.size(0), t = qkv.size(1);
  if (qkv.size(2) != (n_heads + 2 * n_kv_heads) * head_dim || qkv.stride(2) != 1 || b * t > (1LL << 31) - 1) {
    return false;
  }
  if (head_dim % 2 != 0 || !rope_table_fits(rope.cos, b, t, head_dim, qkv) ||
      !rope_table_fits(rope.sin_signed, b, t, head_dim, qkv) || rope.cos.strides() != rope.sin_signed.strides() ||
      rope.cos.size(0) != rope.sin_signed.size(0)) {
    return false;
  }
  if (cache.pending() != t || cache.batch() != b || (cache.in_slot_step() && t != 1)) return false;
  const auto [keys, values] = cache.buffers(0);
  return keys.scalar_type() == qkv.scalar_type() && keys.device() == qkv.device() && keys.size(1) == n_kv_heads &&
         keys.size(3) == head_dim && keys.stride(3) == 1 && values.strides() == keys.strides();
}

bool swiglu_applies(const torch::Tensor& gate_up) {
  if (!decode_kernels_built() || !decode_kernels_enabled()) return false;
  return gate_up.is_cuda() && float_dtype(gate_up.scalar_type()) && gate_up.dim() >= 1 && gate_up.numel() > 0 &&
         gate_up.size(-1) % 2 == 0 && gate_up.is_contiguous() && !gate_up.requires_grad();
}

bool sample_kernel_applies(const torch::Tensor& logits, double top_p) {
  if (!decode_kernels_built() || !decode_kernels_enabled() || top_p < 1.0) return false;
  return logits.is_cuda() && float_dtype(logits.scalar_type()) && logits.dim() == 2 && logits.size(0) > 0 &&
         logits.size(1) > 0 && logits.stride(1) == 1 && !logits.requires_grad();
}

#if KERNELRL_CUDA_KERNELS

void sample_with_kernel(const torch::Tensor& logits, double temperature, at::Generator& generator,
                        const torch::Tensor& token, const torch::Tensor& logprob, const torch::Tensor& sampling_logprob) {
  TORCH_CHECK(sample_kernel_applies(logits, 1.0), "sample_with_kernel: unsupported logits ", logits.sizes());
  const auto b = logits.size(0), vocab = logits.size(1);
  auto check_out = [&](const torch::Tensor& t, torch::ScalarType dtype, const char* name) {
    TORCH_CHECK(t.dim() == 1 && t.size(0) == b && t.scalar_type() == dtype && t.device() == logits.device(),
                "sample_with_kernel: ", name, " must be [", b, "] ", dtype, " on ", logits.device());
  };
  check_out(token, torch::kInt64, "token");
  check_out(logprob, torch::kFloat32, "logprob");
  check_out(sampling_logprob, torch::kFloat32, "sampling_logprob");
  const c10::cuda::CUDAGuard guard(logits.device());
  cuda::SampleArgs args;
  args.logits = logits.data_ptr();
  args.logits_stride_b = logits.stride(0);
  args.vocab = vocab;
  args.dtype = kernel_dtype(logits.scalar_type());
  args.temperature = static_cast<float>(temperature);
  if (temperature != 0.0) {
    auto* cuda_generator = at::check_generator<at::CUDAGeneratorImpl>(generator);
    std::lock_guard<std::mutex> lock(generator.mutex());
    std::tie(args.seed, args.offset) = cuda_generator->philox_engine_inputs(cuda::sample_randoms_per_thread(vocab));
  }
  args.token = token.data_ptr<std::int64_t>();
  args.token_stride = token.stride(0);
  args.logprob = logprob.data_ptr<float>();
  args.logprob_stride = logprob.stride(0);
  args.sampling_logprob = sampling_logprob.data_ptr<float>();
  args.sampling_logprob_stride = sampling_logprob.stride(0);
  args.batch = static_cast<int>(b);
  const char* error = cuda::launch_sample(args, c10::cuda::getCurrentCUDAStream(logits.device().index()).stream());
  TORCH_CHECK(error == nullptr, "sample_with_kernel: ", error);
}

torch::Tensor swiglu(const torch::Tensor& gate_up) {
  TORCH_CHECK(swiglu_applies(gate_up), "swiglu: unsupported input ", gate_up.sizes());
  const c10::cuda::CUDAGuard guard(gate_up.device());
  auto sizes = gate_up.sizes().vec();
  const auto inner = sizes.back() / 2;
  sizes.back() = inner;
  auto out = torch::empty(sizes, gate_up.options());
  cuda::SwigluArgs args;
  args.gate_up = gate_up.data_ptr();
  args.out = out.data_ptr();
  args.rows = gate_up.numel() / (2 * inner);
  args.inner = inner;
  args.dtype = kernel_dtype(gate_up.scalar_type());
  const char* error = cuda::launch_swiglu(args, c10::cuda::getCurrentCUDAStream(gate_up.device().index()).stream());
  TORCH_CHECK(error == nullptr, "swiglu: ", error);
  return out;
}

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
  args.dtype = kernel_dtype(q.scalar_type());
  const char* error = cuda::launch_decode_attention(args, c10::cuda::getCurrentCUDAStream(q.device().index()).stream());
  TORCH_CHECK(error == nullptr, "decode_attention: ", error);
  return out;
}

torch::Tensor rope_and_store(const torch::Tensor& qkv, const Rope& rope, KvCache& cache, std::int64_t layer,
                             std::int64_t n_heads, std::int64_t n_kv_heads, std::int64_t head_dim) {
  TORCH_CHECK(rope_store_applies(qkv, rope, cache, n_heads, n_kv_heads, head_dim),
              "rope_and_store: unsupported tensors qkv ", qkv.sizes());
  const c10::cuda::CUDAGuard guard(qkv.device());
  const auto b = qkv.size(0), t = qkv.size(1);
  auto q = torch::empty({b, t, n_heads, head_dim}, qkv.options());
  auto [keys, values] = cache.buffers(layer);
  cuda::RopeStoreArgs args;
  args.qkv = qkv.data_ptr();
  args.qkv_stride_b = qkv.stride(0);
  args.qkv_stride_t = qkv.stride(1);
  args.cos = rope.cos.data_ptr();
  args.sin_signed = rope.sin_signed.data_ptr();
  args.rope_stride_b = rope.cos.size(0) == 1 ? 0 : rope.cos.stride(0);
  args.rope_stride_t = rope.cos.stride(1);
  args.q_out = q.data_ptr();
  args.k_cache = keys.data_ptr();
  args.v_cache = values.data_ptr();
  args.cache_stride_b = keys.stride(0);
  args.cache_stride_h = keys.stride(1);
  args.cache_stride_t = keys.stride(2);
  if (cache.in_slot_step()) {
    args.slot_on_device = cache.slot().data_ptr<std::int64_t>();
  } else {
    args.slot = cache.write_slot();
  }
  args.batch = static_cast<int>(b);
  args.tokens = static_cast<int>(t);
  args.n_heads = static_cast<int>(n_heads);
  args.n_kv_heads = static_cast<int>(n_kv_heads);
  args.head_dim = static_cast<int>(head_dim);
  args.dtype = kernel_dtype(qkv.scalar_type());
  const char* error = cuda::launch_rope_store(args, c10::cuda::getCurrentCUDAStream(qkv.device().index()).stream());
  TORCH_CHECK(error == nullptr, "rope_and_store: ", error);
  return q;
}

#else

torch::Tensor decode_attention(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                               const torch::Tensor&) {
  TORCH_CHECK(false, "decode_attention: this build has no CUDA kernels");
}

torch::Tensor rope_and_store(const torch::Tensor&, const Rope&, KvCache&, std::int64_t, std::int64_t, std::int64_t,
                             std::int64_t) {
  TORCH_CHECK(false, "rope_and_store: this build has no CUDA kernels");
}

void sample_with_kernel(const torch::Tensor&, double, at::Generator&, const torch::Tensor&, const torch::Tensor&,
                        const torch::Tensor&) {
  TORCH_CHECK(false, "sample_with_kernel: this build has no CUDA kernels");
}

torch::Tensor swiglu(const torch::Tensor&) { TORCH_CHECK(false, "swiglu: this build has no CUDA kernels"); }

#endif

}  // namespace kernelrl::model
