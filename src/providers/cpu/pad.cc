// Pad and CenterCropPad. Both come down to one plan: per axis, how many
// elements to add (positive) or drop (negative) at each end, and what the
// added ones hold. Negative pads crop first, so reflect, edge and wrap work
// on the cropped tensor, as in the ONNX reference.
//
// The plan becomes one source-index table per axis (in scratch memory), with
// -1 for "constant". Each output row (the innermost axis) is then a fill, a
// memcpy of the kept middle and a few looked-up edge elements, and rows are
// independent, so they run in parallel.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/checked_math.h"
#include "providers/cpu/copy_util.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

bool parse_mode(const std::string& s, PadMode& mode) {
  if (s == "constant") {
    mode = PadMode::kConstant;
  } else if (s == "reflect") {
    mode = PadMode::kReflect;
  } else if (s == "edge") {
    mode = PadMode::kEdge;
  } else if (s == "wrap") {
    mode = PadMode::kWrap;
  } else {
    return false;
  }
  return true;
}

// The fill value for the added elements: a value of the data's type, or for
// Pad before opset 11 a float attribute converted to it.
struct FillValue {
  const Tensor* tensor = nullptr;  // constant_value input (first element), when given
  double number = 0.0;             // otherwise this, converted
};

template <typename T>
T fill_as(const FillValue& fill, DataType dtype) {
  if constexpr (std::is_same_v<T, std::string>) {
    return fill.tensor ? fill.tensor->data<std::string>()[0] : std::string();
  } else {
    T v{};
    if (fill.tensor != nullptr) {
      std::memcpy(&v, fill.tensor->raw_data(), sizeof(T));
      return v;
    }
    if (fill.number == 0.0) return v;  // all-zero bits is 0, False and +0.0 in every type
    const double d = fill.number;
    // Storage types are size-keyed, so convert through the real type first.
    auto put = [&v](auto x) {
      if constexpr (sizeof(x) <= sizeof(T)) std::memcpy(&v, &x, sizeof(x));
    };
    switch (dtype) {
      case DataType::kFloat:
        put(static_cast<float>(d));
        break;
      case DataType::kDouble:
        put(d);
        break;
      case DataType::kFloat16:
        put(float_to_float16(static_cast<float>(d)));
        break;
      case DataType::kBfloat16:
        put(float_to_bfloat16(static_cast<float>(d)));
        break;
      case DataType::kInt8:
        put(static_cast<int8_t>(d));
        break;
      case DataType::kUint8:
        put(static_cast<uint8_t>(d));
        break;
      case DataType::kInt16:
        put(static_cast<int16_t>(d));
        break;
      case DataType::kUint16:
        put(static_cast<uint16_t>(d));
        break;
      case DataType::kInt32:
        put(static_cast<int32_t>(d));
        break;
      case DataType::kUint32:
        put(static_cast<uint32_t>(d));
        break;
      case DataType::kInt64:
        put(static_cast<int64_t>(d));
        break;
      case DataType::kUint64:
        put(static_cast<uint64_t>(d));
        break;
      case DataType::kBool:
        put(static_cast<uint8_t>(d != 0.0));
        break;
      default:
        break;
    }
    return v;
  }
}

// Source index along one axis of size n (after cropping, starting at `lo`)
// for the padded position j (j < 0 before the data, j >= n after it); -1
// means the fill value.
int64_t source_index(PadMode mode, int64_t j, int64_t n, int64_t lo) {
  if (j >= 0 && j < n) return lo + j;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return lo + std::clamp<int64_t>(j, 0, n - 1);
    case PadMode::kReflect: {
      if (n == 1) return lo;
      // Reflection without repeating the edge has period 2(n-1); numpy
      // repeats it when a pad is longer than the axis.
      const int64_t period = 2 * (n - 1);
      int64_t m = j % period;
      if (m < 0) m += period;
      return lo + (m < n ? m : period - m);
    }
    case PadMode::kWrap: {
      int64_t m = j % n;
      if (m < 0) m += n;
      return lo + m;
    }
  }
  return -1;
}

const char* mode_name(PadMode mode) {
  switch (mode) {
    case PadMode::kConstant:
      return "constant";
    case PadMode::kReflect:
      return "reflect";
    case PadMode::kEdge:
      return "edge";
    case PadMode::kWrap:
      return "wrap";
  }
  return "?";
}

template <typename T>
void pad_rows(const Tensor& in, Tensor& out, const Shape& begin, const int64_t* const* maps, const Shape& keep_lo,
              const Shape& keep_n, const T& fill, ThreadPool& pool) {
  const Shape& s = in.shape();
  const Shape& os = out.shape();
  const size_t r = s.rank();
  Shape in_strides;
  contiguous_strides(s, in_strides);
  const int64_t inner = os[r - 1];
  const int64_t rows = os.size_to(r - 1);
  // The kept middle of every row: out [mid_at, mid_at + mid_n) <- in [keep_lo, ...).
  // A crop at the end larger than the axis leaves fewer elements than the
  // pad at the start (pads [3, -6] on 5 give 2), hence the min.
  const int64_t mid_at = std::min(std::max<int64_t>(begin[r - 1], 0), inner);
  const int64_t mid_n = keep_n[r - 1];
  const int64_t mid_src = keep_lo[r - 1];
  const int64_t* last_map = maps[r - 1];
  const T* src = in.data<T>();
  T* dst = out.data<T>();
  pool.parallel_for(rows, rows_per_chunk(inner, sizeof(T)), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      T* o = dst + row * inner;
      int64_t offset = 0;
      bool filled = false;
      int64_t rem = row;
      for (size_t k = r - 1; k-- > 0;) {
        const int64_t idx = maps[k][rem % os[k]];
        rem /= os[k];
        if (idx < 0) {
          filled = true;
          break;
        }
        offset += idx * in_strides[k];
      }
      if (filled) {
        fill_elements(o, fill, inner);
        continue;
      }
      const T* in_row = src + offset;
      for (int64_t j = 0; j < mid_at; ++j) o[j] = last_map[j] < 0 ? fill : in_row[last_map[j]];
      copy_elements(o + mid_at, in_row + mid_src, mid_n);
      for (int64_t j = mid_at + mid_n; j < inner; ++j) o[j] = last_map[j] < 0 ? fill : in_row[last_map[j]];
    }
  });
}

// Element i of packed data sits at bit (i % per_byte) * bits of byte
// i / per_byte, the first element in the low bits.
void unpack(const uint8_t* src, int64_t n, int bits, uint8_t* dst) {
  const int per_byte = 8 / bits;
  const auto mask = static_cast<uint8_t>((1u << bits) - 1);
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<uint8_t>(src[i / per_byte] >> ((i % per_byte) * bits)) & mask;
}

void pack(const uint8_t* src, int64_t n, int bits, uint8_t* dst, ThreadPool& pool) {
  const int per_byte = 8 / bits;
  const int64_t bytes = (n + per_byte - 1) / per_byte;
  pool.parallel_for(bytes, kCopyGrainBytes, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      unsigned v = 0;
      for (int p = 0; p < per_byte && k * per_byte + p < n; ++p) v |= unsigned{src[k * per_byte + p]} << (p * bits);
      dst[k] = static_cast<uint8_t>(v);
    }
  });
}

// Pads `in` by begin[k] / end[k] elements on axis k (negative: crops).
Status pad_tensor(KernelContext& ctx, const Tensor& in, const Shape& begin, const Shape& end, PadMode mode,
                  const FillValue& fill) {
  const Shape& s = in.shape();
  const size_t r = s.rank();
  Shape out_shape;
  out_shape.resize(r);
  Shape keep_lo;
  Shape keep_n;
  keep_lo.resize(r);
  keep_n.resize(r);
  for (size_t k = 0; k < r; ++k) {
    // Pads come from the model or an input and may be anything in int64.
    // Summed first: a pad and an equal crop ([INT64_MAX, -INT64_MAX]) cancel.
    int64_t both = 0;
    if (!checked_add(begin[k], end[k], both) || !checked_add(s[k], both, out_shape[k]))
      return kernel_invalid_argument(ctx, "pads " + std::to_string(begin[k]) + " and " + std::to_string(end[k]) +
                                              " on axis " + std::to_string(k) + " of input " + in.describe() +
                                              " overflow int64");
    if (out_shape[k] < 0)
      return kernel_error(ctx, "pads " + std::to_string(begin[k]) + " and " + std::to_string(end[k]) + " on axis " +
                                   std::to_string(k) + " of input " + in.describe() +
                                   " give a negative output dimension " + std::to_string(out_shape[k]));
    // What negative pads crop, at most the whole axis; compared before
    // negating, as -INT64_MIN overflows.
    keep_lo[k] = begin[k] >= 0 ? 0 : begin[k] < -s[k] ? s[k] : -begin[k];
    const int64_t crop_end = end[k] >= 0 ? 0 : end[k] < -s[k] ? s[k] : -end[k];
    keep_n[k] = std::max<int64_t>(s[k] - keep_lo[k] - crop_end, 0);
    if (keep_n[k] == 0 && out_shape[k] > 0 && mode != PadMode::kConstant)
      return kernel_error(ctx, std::string(mode_name(mode)) + " padding needs data to copy, but axis " +
                                   std::to_string(k) + " of input " + in.describe() + " is empty after cropping");
  }
  SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in.dtype(), out_shape));
  if (out->num_elements() == 0) return ok_status();
  // Summed once the output is known to fit: then each dim is at most its
  // element count.
  int64_t map_total = 0;
  for (size_t k = 0; k < r; ++k) map_total += out_shape[k];
  if (r == 0) {
    copy_tensor_data(in, *out, ctx.thread_pool());
    return ok_status();
  }
  // Packed types (4 and 2 bits) are padded one byte per element in scratch
  // memory, then packed into the output.
  const int bits = packed_bits(in.dtype());
  const size_t map_bytes = static_cast<size_t>(map_total) * sizeof(int64_t) + r * sizeof(const int64_t*);
  const size_t unpacked_bytes = bits ? static_cast<size_t>(in.num_elements() + out->num_elements()) : 0;
  SY_ASSIGN_OR_RETURN(void* mem, ctx.scratch(map_bytes + unpacked_bytes));
  auto* table = static_cast<int64_t*>(mem);
  auto* maps = reinterpret_cast<const int64_t**>(table + map_total);
  for (size_t k = 0; k < r; ++k) {
    maps[k] = table;
    const int64_t shift = std::max<int64_t>(begin[k], 0);
    for (int64_t o = 0; o < out_shape[k]; ++o) table[o] = source_index(mode, o - shift, keep_n[k], keep_lo[k]);
    table += out_shape[k];
  }
  if (bits) {
    uint8_t* unpacked_in = static_cast<uint8_t*>(mem) + map_bytes;
    uint8_t* unpacked_out = unpacked_in + in.num_elements();
    unpack(static_cast<const uint8_t*>(in.raw_data()), in.num_elements(), bits, unpacked_in);
    uint8_t value = 0;
    if (fill.tensor != nullptr) unpack(static_cast<const uint8_t*>(fill.tensor->raw_data()), 1, bits, &value);
    const Tensor in_bytes = Tensor::view(DataType::kUint8, s, unpacked_in);
    Tensor out_bytes = Tensor::view(DataType::kUint8, out_shape, unpacked_out);
    pad_rows<uint8_t>(in_bytes, out_bytes, begin, maps, keep_lo, keep_n, value, ctx.thread_pool());
    pack(unpacked_out, out->num_elements(), bits, static_cast<uint8_t*>(out->raw_data()), ctx.thread_pool());
    return ok_status();
  }
  return dispatch_by_element(in.dtype(), [&]<typename T>() {
    const T value = fill_as<T>(fill, in.dtype());
    pad_rows<T>(in, *out, begin, maps, keep_lo, keep_n, value, ctx.thread_pool());
    return ok_status();
  });
}

// ---- Pad ----------------------------------------------------------------------

class PadKernel final : public Kernel {
 public:
  PadKernel(const KernelCreateContext& ctx, Status& status) : from_inputs_(ctx.opset() >= 11) {
    const Node& node = ctx.node();
    const std::string mode = node.attr_string("mode", "constant");
    if (!parse_mode(mode, mode_) || (mode_ == PadMode::kWrap && ctx.opset() < 19)) {
      status = ctx.error("mode '" + mode + "' is not supported (expected constant, reflect, edge" +
                         (ctx.opset() >= 19 ? ", wrap)" : ")"));
      return;
    }
    if (!from_inputs_) {
      const char* name = ctx.opset() >= 2 ? "pads" : "paddings";
      if (!node.has_attr(name)) {
        status = ctx.error(std::string("attribute '") + name + "' is required");
        return;
      }
      pads_ = node.attr_ints(name);
      value_ = node.attr_float("value", 0.0f);
      return;
    }
    if (const DataType t = ctx.input_dtype(1); t != DataType::kUndefined && t != DataType::kInt64)
      status = ctx.error("input 1 (pads) must be int64, got " + std::string(data_type_name(t)));
    if (const DataType t = ctx.input_dtype(3);
        t != DataType::kUndefined && t != DataType::kInt32 && t != DataType::kInt64)
      status = ctx.error("input 3 (axes) must be int32 or int64, got " + std::string(data_type_name(t)));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const auto rank = static_cast<int64_t>(in.shape().rank());
    Shape begin;
    Shape end;
    begin.resize(in.shape().rank());
    end.resize(in.shape().rank());
    for (size_t k = 0; k < in.shape().rank(); ++k) begin[k] = end[k] = 0;
    FillValue fill;
    if (!from_inputs_) {
      if (static_cast<int64_t>(pads_.size()) != 2 * rank)
        return kernel_error(ctx, "pads has " + std::to_string(pads_.size()) + " values, expected " +
                                     std::to_string(2 * rank) + " for input " + in.describe());
      for (int64_t k = 0; k < rank; ++k) {
        begin[static_cast<size_t>(k)] = pads_[static_cast<size_t>(k)];
        end[static_cast<size_t>(k)] = pads_[static_cast<size_t>(k + rank)];
      }
      fill.number = value_;
      return pad_tensor(ctx, in, begin, end, mode_, fill);
    }
    const Tensor* pads = ctx.input(1);
    if (pads == nullptr || pads->dtype() != DataType::kInt64 || pads->shape().rank() > 1)
      return kernel_error(
          ctx, "input 1 (pads) must be a 1-D int64 tensor, got " + (pads ? pads->describe() : std::string("nothing")));
    const Tensor* axes = ctx.input(3);
    const int64_t num_axes = axes ? axes->num_elements() : rank;
    if (pads->num_elements() != 2 * num_axes)
      return kernel_error(ctx, "pads " + pads->describe() + " must have 2 * " + std::to_string(num_axes) +
                                   " values for input " + in.describe() +
                                   (axes ? " and axes " + axes->describe() : std::string()));
    if (axes != nullptr && axes->dtype() != DataType::kInt32 && axes->dtype() != DataType::kInt64)
      return kernel_error(ctx, "input 3 (axes) must be int32 or int64, got " + axes->describe());
    const int64_t* p = pads->data<int64_t>();
    uint64_t seen = 0;
    for (int64_t i = 0; i < num_axes; ++i) {
      int64_t axis = axes ? int_element(*axes, i) : i;
      const int64_t given = axis;
      if (!normalize_axis(axis, rank))
        return kernel_error(ctx, "axis " + std::to_string(given) + " is out of range for input " + in.describe() +
                                     " (expected [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) + "])");
      if (axis < 64) {
        if (seen & (uint64_t{1} << axis))
          return kernel_error(ctx, "axis " + std::to_string(axis) + " appears twice in axes " + axes->describe());
        seen |= uint64_t{1} << axis;
      }
      begin[static_cast<size_t>(axis)] = p[i];
      end[static_cast<size_t>(axis)] = p[i + num_axes];
    }
    if (const Tensor* v = ctx.input(2); v != nullptr && v->num_elements() > 0) {
      if (v->dtype() != in.dtype())
        return kernel_error(
            ctx, "input 2 (constant_value) " + v->describe() + " must have the type of data " + in.describe());
      fill.tensor = v;
    }
    return pad_tensor(ctx, in, begin, end, mode_, fill);
  }

 private:
  bool from_inputs_;
  PadMode mode_ = PadMode::kConstant;
  std::vector<int64_t> pads_;  // before opset 11
  float value_ = 0.0f;
};

// ---- CenterCropPad ------------------------------------------------------------

class CenterCropPadKernel final : public Kernel {
 public:
  CenterCropPadKernel(const KernelCreateContext& ctx, Status& status) : axes_(ctx.node().attr_ints("axes")) {
    if (const DataType t = ctx.input_dtype(1);
        t != DataType::kUndefined && t != DataType::kInt32 && t != DataType::kInt64)
      status = ctx.error("input 1 (shape) must be int32 or int64, got " + std::string(data_type_name(t)));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const Tensor* shape = ctx.input(1);
    const Shape& s = in.shape();
    const auto rank = static_cast<int64_t>(s.rank());
    if (shape == nullptr || (shape->dtype() != DataType::kInt32 && shape->dtype() != DataType::kInt64))
      return kernel_error(ctx, "input 1 (shape) must be an int32 or int64 tensor");
    const int64_t n = axes_.empty() ? rank : static_cast<int64_t>(axes_.size());
    if (shape->num_elements() != n)
      return kernel_error(ctx, "shape " + shape->describe() + " must have " + std::to_string(n) +
                                   " values, one per axis of input " + in.describe());
    Shape begin;
    Shape end;
    begin.resize(s.rank());
    end.resize(s.rank());
    for (size_t k = 0; k < s.rank(); ++k) begin[k] = end[k] = 0;
    for (int64_t i = 0; i < n; ++i) {
      int64_t axis = axes_.empty() ? i : axes_[static_cast<size_t>(i)];
      const int64_t given = axis;
      if (!normalize_axis(axis, rank))
        return kernel_error(ctx, "axis " + std::to_string(given) + " is out of range for input " + in.describe());
      const int64_t want = int_element(*shape, i);
      if (want < 0) return kernel_error(ctx, "shape " + shape->describe() + " has a negative dimension");
      const int64_t have = s[static_cast<size_t>(axis)];
      // Crops start at floor((have - want) / 2); odd pads put the extra
      // element at the end.
      const int64_t diff = want - have;
      const int64_t lead = diff >= 0 ? diff / 2 : -((-diff) / 2);
      begin[static_cast<size_t>(axis)] = lead;
      end[static_cast<size_t>(axis)] = diff - lead;
    }
    return pad_tensor(ctx, in, begin, end, PadMode::kConstant, FillValue{});
  }

 private:
  std::vector<int64_t> axes_;
};

const KernelDef kPadKernels[] = {
    {"", "Pad", 1, 10, 0, kElementTypes, &make_kernel<PadKernel>},
    {"", "Pad", 11, 20, 0, kElementTypes, &make_kernel<PadKernel>},
    {"", "Pad", 21, kLatestVersion, 0, kAllTensorTypes, &make_kernel<PadKernel>},
    {"", "CenterCropPad", 18, kLatestVersion, 0, kElementTypes, &make_kernel<CenterCropPadKernel>},
};

}  // namespace

std::span<const KernelDef> pad_kernels() { return kPadKernels; }

}  // namespace sy::cpu
