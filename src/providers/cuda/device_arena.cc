#include "device_arena.h"

#include <algorithm>
#include <cstdio>

namespace sy::cuda {
namespace {

thread_local std::string t_last_error;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

size_t next_power_of_two(size_t n) {
  size_t p = 1;
  while (p < n && p < (SIZE_MAX >> 1) + 1) p <<= 1;
  return p;
}

}  // namespace

std::string format_bytes(size_t bytes) {
  char buf[96];
  const double b = static_cast<double>(bytes);
  if (bytes >= (size_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB (%zu bytes)", b / (1 << 30), bytes);
  else if (bytes >= (size_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB (%zu bytes)", b / (1 << 20), bytes);
  else std::snprintf(buf, sizeof buf, "%zu bytes", bytes);
  return buf;
}

DeviceArena::DeviceArena(ArenaBacking backing, size_t limit, ArenaExtendStrategy strategy, std::string device_name)
    : backing_(backing), limit_(limit), strategy_(strategy), device_name_(std::move(device_name)) {}

DeviceArena::~DeviceArena() {
  for (const auto& [start, size] : regions_) backing_.deallocate(backing_.state, reinterpret_cast<void*>(start));
}

const std::string& DeviceArena::last_error() { return t_last_error; }

void DeviceArena::insert_free(uintptr_t address, size_t size) { free_by_size_.emplace(size, address); }

void DeviceArena::erase_free(uintptr_t address, size_t size) {
  auto [lo, hi] = free_by_size_.equal_range(size);
  for (auto it = lo; it != hi; ++it) {
    if (it->second == address) {
      free_by_size_.erase(it);
      return;
    }
  }
}

void DeviceArena::release_free_regions() {
  for (auto it = regions_.begin(); it != regions_.end();) {
    const auto block = blocks_.find(it->first);
    if (block != blocks_.end() && block->second.free && block->second.size == it->second) {
      erase_free(it->first, it->second);
      blocks_.erase(block);
      backing_.deallocate(backing_.state, reinterpret_cast<void*>(it->first));
      stats_.reserved -= it->second;
      --stats_.regions;
      it = regions_.erase(it);
    } else {
      ++it;
    }
  }
}

bool DeviceArena::extend(size_t bytes, std::string& error) {
  size_t want = bytes;
  if (strategy_ == ArenaExtendStrategy::kNextPowerOfTwo)
    want = std::max({bytes, kMinRegion, next_power_of_two(std::max(bytes, last_region_ * 2))});
  const size_t room = limit_ > stats_.reserved ? limit_ - stats_.reserved : 0;
  if (want > room) want = bytes;  // the minimum that can still fit
  if (want > room) {
    release_free_regions();
    const size_t room_now = limit_ > stats_.reserved ? limit_ - stats_.reserved : 0;
    if (bytes > room_now) {
      error = "out of memory on " + device_name_ + ": asked for " + format_bytes(bytes) + "; gpu_mem_limit is " +
              format_bytes(limit_) + ", the arena holds " + format_bytes(stats_.reserved) + " of which " +
              format_bytes(stats_.in_use) + " is in use";
      return false;
    }
  }
  std::string backing_error;
  void* p = backing_.allocate(backing_.state, want, backing_error);
  if (p == nullptr && want > bytes) {
    want = bytes;
    p = backing_.allocate(backing_.state, want, backing_error);
  }
  if (p == nullptr) {
    // Free regions nobody uses and try once more before giving up.
    release_free_regions();
    p = backing_.allocate(backing_.state, want, backing_error);
  }
  if (p == nullptr) {
    error = "out of memory on " + device_name_ + ": asked for " + format_bytes(bytes) + " (a region of " +
            format_bytes(want) + "); the arena holds " + format_bytes(stats_.reserved) + " of which " +
            format_bytes(stats_.in_use) + " is in use" +
            (limit_ == SIZE_MAX ? std::string() : "; gpu_mem_limit is " + format_bytes(limit_)) +
            (backing_error.empty() ? std::string() : "; " + backing_error);
    return false;
  }
  const auto start = reinterpret_cast<uintptr_t>(p);
  regions_[start] = want;
  blocks_[start] = Block{want, true, start};
  insert_free(start, want);
  stats_.reserved += want;
  ++stats_.regions;
  last_region_ = want;
  return true;
}

void* DeviceArena::allocate(size_t bytes) {
  const size_t n = round_up(bytes == 0 ? 1 : bytes, kAlignment);
  std::lock_guard<std::mutex> lock(mutex_);
  auto fit = free_by_size_.lower_bound(n);
  if (fit == free_by_size_.end()) {
    std::string error;
    if (!extend(n, error)) {
      t_last_error = error;
      return nullptr;
    }
    fit = free_by_size_.lower_bound(n);
  }
  const uintptr_t address = fit->second;
  free_by_size_.erase(fit);
  Block& block = blocks_.at(address);
  if (block.size - n >= kAlignment) {  // split off the rest as a free block
    const uintptr_t rest = address + n;
    blocks_[rest] = Block{block.size - n, true, block.region};
    insert_free(rest, block.size - n);
    block.size = n;
  }
  block.free = false;
  stats_.in_use += block.size;
  stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
  ++stats_.allocations;
  return reinterpret_cast<void*>(address);
}

void DeviceArena::deallocate(void* pointer) {
  if (pointer == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(reinterpret_cast<uintptr_t>(pointer));
  if (it == blocks_.end() || it->second.free) return;  // not ours, or freed twice: ignore rather than corrupt
  it->second.free = true;
  stats_.in_use -= it->second.size;
  // Merge with the following block, then the preceding one, within a region.
  auto next = std::next(it);
  if (next != blocks_.end() && next->second.free && next->second.region == it->second.region &&
      next->first == it->first + it->second.size) {
    erase_free(next->first, next->second.size);
    it->second.size += next->second.size;
    blocks_.erase(next);
  }
  if (it != blocks_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.free && prev->second.region == it->second.region && prev->first + prev->second.size == it->first) {
      erase_free(prev->first, prev->second.size);
      prev->second.size += it->second.size;
      blocks_.erase(it);
      it = prev;
    }
  }
  insert_free(it->first, it->second.size);
}

ArenaStats DeviceArena::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace sy::cuda
