/* kernelrl candidate ABI: the one header a native (CUDA) or host (C++) candidate includes.
 *
 * A candidate defines exactly one entry point:
 *
 *   extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs,
 *                                   const DLTensor* params, int n_params,
 *                                   DLTensor* outputs, int n_outputs, void* stream);
 *
 *   inputs   the task's get_inputs(), in order
 *   params   the reference model's state_dict() (parameters and buffers), in order
 *   outputs  the reference forward's return (one tensor or a tuple), preallocated, contiguous,
 *            filled with garbage (NaN for floats) before every call: write every element
 *   stream   the cudaStream_t to launch on (native); NULL for host candidates
 *   returns  0 on success, non-zero for an error the candidate detected itself
 *
 * Tensors are DLPack DLTensor views (layout-identical to dlpack.h v0.6 and later). Data live on the
 * device the candidate targets (kDLCUDA for native, kDLCPU for host). Inputs and params are
 * read-only: the evaluator checks that they are unchanged after the call. Constants of the task
 * (sizes, scalars from get_init_inputs()) are read from the task source; shapes are also in
 * `shape` of every view.
 *
 * This header is plain C and C++ and includes only <stdint.h>.
 */
#ifndef KERNELRL_ABI_H
#define KERNELRL_ABI_H

#include <stdint.h>

#define KERNELRL_ABI_VERSION 1

#ifndef DLPACK_VERSION /* dlpack.h already included: use its identical definitions */

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

typedef enum {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLBfloat = 4,
  kDLBool = 6,
} DLDataTypeCode;

typedef struct {
  uint8_t code;   /* DLDataTypeCode */
  uint8_t bits;   /* 32 for float32, 16 for float16 and bfloat16, 8 for bool */
  uint16_t lanes; /* always 1 here */
} DLDataType;

typedef struct {
  void* data;          /* pointer to the first element (byte_offset is always 0 here) */
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;      /* ndim sizes */
  int64_t* strides;    /* ndim strides in elements; contiguous row-major for outputs */
  uint64_t byte_offset;
} DLTensor;

#ifdef __cplusplus
}
#endif

#endif /* DLPACK_VERSION */

/* Number of elements of a view. */
static inline int64_t kernelrl_numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

#ifdef __cplusplus
#define KERNELRL_EXTERN_C extern "C"
#else
#define KERNELRL_EXTERN_C
#endif

/* The entry point every native and host candidate defines. */
KERNELRL_EXTERN_C int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                       int n_params, DLTensor* outputs, int n_outputs,
                                       void* stream);

#endif /* KERNELRL_ABI_H */
