// MappedFile: the bytes of a whole file, memory-mapped (or read into memory
// when small), kept alive by shared_ptr so that tensors can view into it.
//
// Every file Switchyard reads (models, external data, .npy and .pb tensors)
// comes through here, so the checks on untrusted paths live in one place:
// a path with an embedded NUL is refused (the C library would open a
// shorter one), and only regular files are opened. A FIFO, a socket or a
// device such as /dev/zero would hang the reader or feed it without end;
// they are refused from a stat() before the open, and the open itself does
// not block (O_NONBLOCK) in case one is swapped in between. The size the
// caller sees is the file's, so a size declared inside the file can be
// checked against it before anything is allocated.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "switchyard/status.h"

namespace sy {

class MappedFile {
 public:
  struct Options {
    // Files at least this large are mapped; smaller ones are read, which is
    // cheaper than a mapping for a few kilobytes.
    size_t map_threshold = size_t{1} << 20;
    // Map copy-on-write so that a writer gets private pages instead of a
    // fault or a modified file. Tensors viewing into the file need this:
    // Tensor hands out non-const pointers.
    bool writable = false;
    // Refuse a path whose last component is a symbolic link (O_NOFOLLOW).
    bool no_follow = false;
  };

  // Errors: kNoSuchFile when the file is missing or cannot be opened;
  // kInvalidArgument for a path with a NUL byte, a directory or another
  // file that is not a regular one (FIFO, socket, device).
  static Result<std::shared_ptr<MappedFile>> open(const std::string& path, const Options& options);
  static Result<std::shared_ptr<MappedFile>> open(const std::string& path) { return open(path, Options{}); }

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const uint8_t* data() const { return data_; }
  uint8_t* mutable_data() { return data_; }
  size_t size() const { return size_; }
  bool is_mapped() const { return mapped_; }
  const std::string& path() const { return path_; }
  // Identity of the opened file, to compare with a stat() of the path.
  dev_t device_id() const { return dev_; }
  ino_t inode() const { return ino_; }

 private:
  MappedFile() = default;

  std::string path_;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  std::vector<uint8_t> buffer_;  // used when the file was read, not mapped
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

// The path as it can be shown in a message: an embedded NUL byte as "\0".
std::string printable_path(std::string_view path);

// The other direction: writes `bytes` as the whole file at `path`
// (replacing it). kNoSuchFile when it cannot be created; kInvalidArgument
// for a path with a NUL byte or one naming something other than a regular
// file (a FIFO would block the open, a device would swallow the bytes).
Status write_file(const std::string& path, std::string_view bytes);

}  // namespace sy
