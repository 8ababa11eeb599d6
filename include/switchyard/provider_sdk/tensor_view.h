// TensorView: a provider's view of the ABI's sy_tensor, a kernel's input or
// output or a node's static type. Part of the provider SDK (see axis.h):
// every provider reads the same struct the same way, with the element
// count checked for overflow once, here, instead of in each kernel.
//
// A view owns nothing; its data belongs to the core (inputs, outputs,
// constants) for as long as the ABI says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "switchyard/data_type.h"
#include "switchyard/provider_abi.h"
#include "switchyard/provider_sdk/dtype.h"

namespace sy::provider_sdk {

struct TensorView {
  // The ABI's tensor itself: ABI calls fill it (&view.t), and kernels
  // pass t.dtype and t.dims back to them.
  sy_tensor t{};

  DataType dtype() const { return static_cast<DataType>(t.dtype); }
  // -1 for a static type of unknown rank.
  int rank() const { return t.rank; }
  // -1 for a dimension of a static type that is not known.
  int64_t dim(int i) const { return t.dims[i]; }
  const int64_t* dims() const { return t.dims; }
  sy_device device() const { return t.device; }

  // The product of the dims (1 for a scalar); -1 when the rank or a dim is
  // unknown or negative, or the product overflows int64.
  int64_t num_elements() const {
    if (t.rank < 0 || t.rank > SY_MAX_RANK) return -1;
    int64_t n = 1;
    for (int i = 0; i < t.rank; ++i) {
      const int64_t d = t.dims[i];
      if (d < 0 || (d > 0 && n > std::numeric_limits<int64_t>::max() / d)) return -1;
      n *= d;
    }
    return n;
  }
  // num_elements() times dtype_size(); 0 when either is unknown (a type
  // without a fixed byte size, an unknown shape) or the product overflows.
  size_t byte_size() const {
    const int64_t n = num_elements();
    const size_t size = dtype_size(t.dtype);
    if (n < 0 || (size > 0 && static_cast<uint64_t>(n) > std::numeric_limits<size_t>::max() / size)) return 0;
    return static_cast<size_t>(n) * size;
  }

  // The data, typed as T by the caller (which has checked dtype()); null
  // in a static type.
  template <typename T = void>
  T* data() const {
    return static_cast<T*>(t.data);
  }

  // "float[1,3,224,224]", "?" for an unknown dim, "float[?]" for an unknown rank.
  // Built by appending: GCC 12 warns (-Wrestrict, its bug 105329) about
  // "," + std::string at -O3, which a plugin may build with.
  std::string describe() const {
    std::string s = dtype_name(t.dtype);
    s += "[";
    for (int i = 0; i < t.rank && i < SY_MAX_RANK; ++i) {
      if (i > 0) s += ",";
      s += t.dims[i] < 0 ? std::string("?") : std::to_string(t.dims[i]);
    }
    s += t.rank < 0 ? "?]" : "]";
    return s;
  }
};

}  // namespace sy::provider_sdk
