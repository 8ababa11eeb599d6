// Helpers shared by the data-movement kernels (Reshape, Concat, Slice,
// Gather, Transpose, Expand, Tile, ...). These kernels never look at element
// values, so one instantiation per element size serves every type of that
// size; std::string is its own case because its elements must be copied as
// objects, not bytes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

#include "core/checked_math.h"
#include "core/thread_pool.h"
#include "switchyard/provider_sdk/axis.h"
#include "providers/kernel.h"
#include "switchyard/data_type.h"
#include "switchyard/tensor.h"

namespace sy::cpu {

using provider_sdk::normalize_axis;  // the provider SDK's, shared with the CUDA provider

// complex128: moved as 16 opaque bytes.
struct Bytes16 {
  uint64_t lo;
  uint64_t hi;
};

// Every tensor type ONNX defines (bits 1..26).
inline constexpr uint64_t kAllTensorTypes = ((uint64_t{1} << (kMaxDataTypeValue + 1)) - 1) & ~uint64_t{1};
// Types packed below a byte: only ops that move whole buffers support them.
inline constexpr uint64_t kPackedTypes = type_bit(DataType::kUint4) | type_bit(DataType::kInt4) |
                                         type_bit(DataType::kFloat4E2M1) | type_bit(DataType::kUint2) |
                                         type_bit(DataType::kInt2);
// Types with a whole number of bytes per element, plus string.
inline constexpr uint64_t kElementTypes = kAllTensorTypes & ~kPackedTypes;
inline constexpr uint64_t kIndexTypes = type_bit(DataType::kInt32) | type_bit(DataType::kInt64);

// Bytes a parallel_for chunk should at least move: smaller copies are not
// worth waking a worker for.
inline constexpr int64_t kCopyGrainBytes = 64 * 1024;

// Elements per chunk for a loop over rows of `row_elements` elements of
// `element_bytes` each.
inline int64_t rows_per_chunk(int64_t row_elements, size_t element_bytes) {
  const int64_t row_bytes = std::max<int64_t>(1, row_elements * static_cast<int64_t>(element_bytes));
  return std::max<int64_t>(1, kCopyGrainBytes / row_bytes);
}

// Calls fn.template operator()<T>() with T the storage type of `dtype`'s
// elements (uint8_t, uint16_t, uint32_t, uint64_t, Bytes16 or std::string).
template <typename Fn>
Status dispatch_by_element(DataType dtype, Fn&& fn) {
  if (dtype == DataType::kString) return fn.template operator()<std::string>();
  switch (element_size(dtype)) {
    case 1:
      return fn.template operator()<uint8_t>();
    case 2:
      return fn.template operator()<uint16_t>();
    case 4:
      return fn.template operator()<uint32_t>();
    case 8:
      return fn.template operator()<uint64_t>();
    case 16:
      return fn.template operator()<Bytes16>();
    default:
      break;
  }
  return not_implemented("element type " + std::string(data_type_name(dtype)) + " is not supported by this kernel");
}

template <typename T>
inline void copy_elements(T* dst, const T* src, int64_t n) {
  if (n <= 0) return;
  if constexpr (std::is_trivially_copyable_v<T>) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
  } else {
    std::copy_n(src, n, dst);
  }
}

template <typename T>
inline void fill_elements(T* dst, const T& value, int64_t n) {
  if (n > 0) std::fill_n(dst, n, value);
}

// Copies a whole tensor's contents into `dst` (same element count and type):
// the bytes for every type but string, packed types included.
inline void copy_tensor_data(const Tensor& src, Tensor& dst, ThreadPool& pool) {
  if (src.dtype() == DataType::kString) {
    const std::string* in = src.data<std::string>();
    std::string* out = dst.data<std::string>();
    pool.parallel_for(src.num_elements(), rows_per_chunk(1, 64),
                      [&](int64_t b, int64_t e) { std::copy(in + b, in + e, out + b); });
    return;
  }
  const auto* in = static_cast<const uint8_t*>(src.raw_data());
  auto* out = static_cast<uint8_t*>(dst.raw_data());
  if (in == out) return;
  pool.parallel_for(static_cast<int64_t>(src.byte_size()), kCopyGrainBytes * 4,
                    [&](int64_t b, int64_t e) { std::memcpy(out + b, in + b, static_cast<size_t>(e - b)); });
}

// Output i becomes `value` as it is: a sequence or optional is shared (they
// are immutable), a tensor is copied into the output's planned memory,
// since it may be a view of a buffer that is reused (a slot of this run or
// of a subgraph's). What Identity, the optional ops and If hand on.
inline Status output_value(KernelContext& ctx, size_t i, const Tensor& value) {
  if (!value.is_tensor()) return ctx.set_output(i, value);
  SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(i, value.dtype(), value.shape()));
  copy_tensor_data(value, *out, ctx.thread_pool());
  return ok_status();
}

// Bits per element of the types packed below a byte (stored little end
// first within a byte); 0 for every other type.
inline int packed_bits(DataType t) {
  switch (t) {
    case DataType::kUint4:
    case DataType::kInt4:
    case DataType::kFloat4E2M1: return 4;
    case DataType::kUint2:
    case DataType::kInt2: return 2;
    default: return 0;
  }
}

// Element i of a packed buffer (`bits` = packed_bits of its type), and its
// replacement: the low bits of `code`.
inline uint32_t read_packed(const uint8_t* data, int64_t i, int bits) {
  const int per_byte = 8 / bits;
  const int shift = static_cast<int>(i % per_byte) * bits;
  return (data[i / per_byte] >> shift) & ((1u << bits) - 1);
}

inline void write_packed(uint8_t* data, int64_t i, int bits, uint32_t code) {
  const int per_byte = 8 / bits;
  const int shift = static_cast<int>(i % per_byte) * bits;
  const auto mask = static_cast<uint8_t>(((1u << bits) - 1) << shift);
  data[i / per_byte] = static_cast<uint8_t>((data[i / per_byte] & ~mask) | ((code << shift) & mask));
}

// Element i of an int32 or int64 tensor.
inline int64_t int_element(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
}

// Element i of a float, double, float16, bfloat16, int32 or int64 tensor
// as double (0 for other types): for parameters read a few at a time
// (scales, ROIs, per-channel values), where a switch per element is free.
inline double number_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat: return t.data<float>()[i];
    case DataType::kDouble: return t.data<double>()[i];
    case DataType::kFloat16: return float16_to_float(t.data<uint16_t>()[i]);
    case DataType::kBfloat16: return bfloat16_to_float(t.data<uint16_t>()[i]);
    case DataType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case DataType::kInt32: return t.data<int32_t>()[i];
    default: return 0.0;
  }
}

// ---- index inputs (Gather*, Scatter*) -----------------------------------------

// Calls fn.template operator()<I>() with I = int32_t or int64_t, the type of
// `indices`.
template <typename Fn>
Status dispatch_index(const KernelContext& ctx, const Tensor& indices, Fn&& fn) {
  if (indices.dtype() == DataType::kInt32) return fn.template operator()<int32_t>();
  if (indices.dtype() == DataType::kInt64) return fn.template operator()<int64_t>();
  return kernel_error(ctx, "indices must be int32 or int64, got " + indices.describe());
}

// Index `value` (at position `pos` of the indices) out of [-dim, dim).
inline Status index_error(const KernelContext& ctx, int64_t pos, int64_t value, int64_t dim, const Tensor& data,
                          int64_t axis) {
  return kernel_error(ctx, "index " + std::to_string(value) + " (at position " + std::to_string(pos) +
                               " of the indices) is out of range for axis " + std::to_string(axis) + " of data " +
                               data.describe() + " (expected [" + std::to_string(-dim) + ", " +
                               std::to_string(dim - 1) + "])");
}

// Every one of the n indices in [-dim, dim), else an error naming the first
// that is not.
template <typename I>
Status check_indices(const KernelContext& ctx, const I* idx, int64_t n, int64_t dim, const Tensor& data, int64_t axis) {
  for (int64_t i = 0; i < n; ++i)
    if (idx[i] < -dim || idx[i] >= dim) return index_error(ctx, i, idx[i], dim, data, axis);
  return ok_status();
}

// Row-major element strides of `shape` into `strides` (same rank). `shape`
// is an existing tensor's, whose element count fits in int64.
inline void contiguous_strides(const Shape& shape, Shape& strides) {
  strides.resize(shape.rank());
  int64_t s = 1;
  for (size_t i = shape.rank(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
}

// A copy from a strided source into a contiguous destination: the
// destination is row-major over `dims`; source element offsets are
// sum(index[i] * src_strides[i]) (a stride of 0 repeats, a negative one walks
// backwards). Built by CopyPlan::add, which drops unit dims and merges dims
// that are contiguous in the source, so the innermost run is as long as it
// can be.
struct CopyPlan {
  static constexpr int kMaxRank = 24;
  int rank = 0;
  bool empty = false;  // some dim is 0: nothing to copy
  bool too_deep = false;
  int64_t dims[kMaxRank] = {};
  int64_t src_strides[kMaxRank] = {};

  // Appends the next (outer to inner) dim. Kernels may fill a plan before
  // they have checked the output shape, so the merge test is overflow-checked:
  // products that do not fit are simply not merged.
  void add(int64_t dim, int64_t src_stride) {
    if (dim == 0) empty = true;
    if (dim == 1) return;
    int64_t run_stride = 0;
    int64_t merged = 0;
    if (rank > 0 && checked_mul(src_stride, dim, run_stride) && src_strides[rank - 1] == run_stride &&
        checked_mul(dims[rank - 1], dim, merged)) {
      dims[rank - 1] = merged;
      src_strides[rank - 1] = src_stride;
      return;
    }
    if (rank == kMaxRank) {
      too_deep = true;
      return;
    }
    dims[rank] = dim;
    src_strides[rank] = src_stride;
    ++rank;
  }
  int64_t num_elements() const {
    if (empty) return 0;
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= dims[i];
    return n;
  }
};

// Runs `plan`: dst is contiguous, src is the element at index 0.
template <typename T>
void strided_copy(T* dst, const T* src, const CopyPlan& plan, ThreadPool& pool) {
  if (plan.empty) return;
  if (plan.rank == 0) {
    dst[0] = src[0];
    return;
  }
  const int r = plan.rank;
  const int64_t inner = plan.dims[r - 1];
  const int64_t inner_stride = plan.src_strides[r - 1];
  int64_t rows = 1;
  for (int i = 0; i + 1 < r; ++i) rows *= plan.dims[i];
  pool.parallel_for(rows, rows_per_chunk(inner, sizeof(T)), [&](int64_t begin, int64_t end) {
    // The source offset and multi-index of row `begin`, then carried row by row.
    int64_t index[CopyPlan::kMaxRank];
    int64_t offset = 0;
    int64_t rem = begin;
    for (int i = r - 2; i >= 0; --i) {
      index[i] = rem % plan.dims[i];
      rem /= plan.dims[i];
      offset += index[i] * plan.src_strides[i];
    }
    T* out = dst + begin * inner;
    for (int64_t row = begin; row < end; ++row) {
      const T* in = src + offset;
      if (inner_stride == 1) {
        copy_elements(out, in, inner);
      } else if (inner_stride == 0) {
        fill_elements(out, *in, inner);
      } else {
        for (int64_t k = 0; k < inner; ++k) out[k] = in[k * inner_stride];
      }
      out += inner;
      for (int i = r - 2; i >= 0; --i) {
        offset += plan.src_strides[i];
        if (++index[i] < plan.dims[i]) break;
        offset -= plan.src_strides[i] * plan.dims[i];
        index[i] = 0;
      }
    }
  });
}

// strided_copy for any element type with a byte size or string.
inline Status strided_copy(const KernelContext& ctx, DataType dtype, void* dst, const void* src, const CopyPlan& plan) {
  if (plan.too_deep)
    return kernel_error(ctx, "the copy needs more than " + std::to_string(CopyPlan::kMaxRank) +
                                 " non-contiguous dimensions, more than this kernel supports");
  return dispatch_by_element(dtype, [&]<typename T>() {
    strided_copy(static_cast<T*>(dst), static_cast<const T*>(src), plan, ctx.thread_pool());
    return ok_status();
  });
}

}  // namespace sy::cpu
