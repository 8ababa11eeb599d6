#include "switchyard/shape.h"

namespace sy {

void Shape::assign(std::span<const int64_t> dims) {
  resize(dims.size());
  int64_t* d = data();
  for (size_t i = 0; i < dims.size(); ++i) d[i] = dims[i];
}

void Shape::resize(size_t rank) {
  if (rank <= kInlineRank) {
    if (rank_ > kInlineRank) {
      for (size_t i = 0; i < rank; ++i) inline_[i] = heap_[i];
    } else {
      for (size_t i = rank_; i < rank; ++i) inline_[i] = 1;
    }
  } else {
    if (rank_ <= kInlineRank) {
      heap_.assign(inline_, inline_ + rank_);
    }
    heap_.resize(rank, 1);
  }
  rank_ = rank;
}

void Shape::push_back(int64_t dim) {
  resize(rank_ + 1);
  data()[rank_ - 1] = dim;
}

int64_t Shape::num_elements() const { return size_from(0); }

int64_t Shape::size_from(size_t from) const {
  int64_t n = 1;
  for (size_t i = from; i < rank_; ++i) n *= data()[i];
  return n;
}

int64_t Shape::size_to(size_t to) const {
  int64_t n = 1;
  for (size_t i = 0; i < to && i < rank_; ++i) n *= data()[i];
  return n;
}

std::string Shape::to_string() const {
  std::string s = "[";
  for (size_t i = 0; i < rank_; ++i) {
    if (i) s += ",";
    s += std::to_string(data()[i]);
  }
  return s + "]";
}

bool operator==(const Shape& a, const Shape& b) {
  if (a.rank_ != b.rank_) return false;
  for (size_t i = 0; i < a.rank_; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

}  // namespace sy
