// Shape: the dimensions of a concrete tensor. Small shapes live inline so
// that computing an output shape inside a kernel never touches the heap.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace sy {

class Shape {
 public:
  static constexpr size_t kInlineRank = 8;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) { assign(std::span<const int64_t>(dims.begin(), dims.size())); }
  explicit Shape(std::span<const int64_t> dims) { assign(dims); }
  explicit Shape(const std::vector<int64_t>& dims) { assign(std::span<const int64_t>(dims)); }

  void assign(std::span<const int64_t> dims);
  // Sets the rank; new dimensions are 1.
  void resize(size_t rank);
  void push_back(int64_t dim);
  void clear() { rank_ = 0; }

  size_t rank() const { return rank_; }
  bool empty() const { return rank_ == 0; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t& operator[](size_t i) { return data()[i]; }
  const int64_t* data() const { return rank_ <= kInlineRank ? inline_ : heap_.data(); }
  int64_t* data() { return rank_ <= kInlineRank ? inline_ : heap_.data(); }
  std::span<const int64_t> dims() const { return {data(), rank_}; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + rank_; }
  std::vector<int64_t> to_vector() const { return {begin(), end()}; }

  // Product of all dimensions; 1 for a scalar.
  int64_t num_elements() const;
  // Product of dims [from, to).
  int64_t size_from(size_t from) const;
  int64_t size_to(size_t to) const;

  // "[2,3,224,224]"
  std::string to_string() const;

  friend bool operator==(const Shape& a, const Shape& b);
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  size_t rank_ = 0;
  int64_t inline_[kInlineRank] = {};
  std::vector<int64_t> heap_;  // used only when rank_ > kInlineRank
};

}  // namespace sy
