#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sy {

namespace {

// Closes the descriptor on every return path.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }

 private:
  int fd_;
};

Status open_error(const std::string& path, int err) {
  if (err == ENOENT || err == ENOTDIR) return Status(StatusCode::kNoSuchFile, "No such file: " + path);
  if (err == EISDIR) return invalid_argument(path + " is a directory, not a file");
  if (err == ELOOP) return invalid_argument(path + " is a symbolic link, which is not followed here");
  return Status(StatusCode::kNoSuchFile, "cannot open " + path + ": " + std::strerror(err));
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link, which is not followed here";
  return "of an unknown kind";
}

// `verb`: "read" or "written".
Status require_regular(const std::string& path, mode_t mode, const char* verb = "read") {
  if (S_ISREG(mode)) return ok_status();
  return invalid_argument(path + " is " + file_kind(mode) + ", not a regular file; only regular files are " + verb);
}

Status refuse_nul(const std::string& path) {
  if (path.find('\0') == std::string::npos) return ok_status();
  return invalid_argument("the path '" + printable_path(path) +
                          "' contains a NUL byte; the file it names cannot be opened as given");
}

}  // namespace

std::string printable_path(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (char c : path) {
    if (c == '\0') out += "\\0";
    else out += c;
  }
  return out;
}

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string& path, const Options& options) {
  SY_RETURN_IF_ERROR(refuse_nul(path));
  // Checked before the open: opening a FIFO for reading blocks until a
  // writer comes, and a device may never end.
  struct stat st {};
  const int stat_result = options.no_follow ? ::lstat(path.c_str(), &st) : ::stat(path.c_str(), &st);
  if (stat_result != 0) return open_error(path, errno);
  SY_RETURN_IF_ERROR(require_regular(path, st.st_mode));

  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;
  if (options.no_follow) flags |= O_NOFOLLOW;
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return open_error(path, errno);
  FdCloser closer(fd);

  // The path may name another file by now; what counts is the one opened.
  if (::fstat(fd, &st) != 0) return open_error(path, errno);
  SY_RETURN_IF_ERROR(require_regular(path, st.st_mode));

  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  file->dev_ = st.st_dev;
  file->ino_ = st.st_ino;
  if (file->size_ == 0) return file;

  if (file->size_ >= options.map_threshold) {
    const int prot = options.writable ? (PROT_READ | PROT_WRITE) : PROT_READ;
    void* p = ::mmap(nullptr, file->size_, prot, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
      return Status(StatusCode::kNoSuchFile, "cannot map " + path + " (" + std::to_string(file->size_) +
                                                 " bytes): " + std::strerror(errno));
    file->data_ = static_cast<uint8_t*>(p);
    file->mapped_ = true;
    return file;
  }

  file->buffer_.resize(file->size_);
  size_t done = 0;
  while (done < file->size_) {
    const ssize_t n = ::read(fd, file->buffer_.data() + done, file->size_ - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status(StatusCode::kNoSuchFile, "cannot read " + path + ": " + std::strerror(errno));
    // The file shrank after fstat(); keep what is there.
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  file->size_ = done;
  file->buffer_.resize(done);
  file->data_ = file->buffer_.data();
  return file;
}

MappedFile::~MappedFile() {
  if (mapped_ && data_ != nullptr) ::munmap(data_, size_);
}

Status write_file(const std::string& path, std::string_view bytes) {
  SY_RETURN_IF_ERROR(refuse_nul(path));
  // The same rule as for reading, for the same reasons: opening a FIFO for
  // writing waits for a reader forever, and a device takes whatever it is
  // given. O_NONBLOCK makes that open fail (ENXIO) instead of waiting; the
  // truncation waits until fstat() has shown a regular file.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) SY_RETURN_IF_ERROR(require_regular(path, st.st_mode, "written"));
    return Status(StatusCode::kNoSuchFile, "cannot create " + path + ": " + std::strerror(err));
  }
  FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail("cannot stat " + path + ": " + std::strerror(errno));
  SY_RETURN_IF_ERROR(require_regular(path, st.st_mode, "written"));
  if (::ftruncate(fd, 0) != 0) return fail("cannot truncate " + path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("failed to write " + path + ": " + std::strerror(n < 0 ? errno : EIO));
    done += static_cast<size_t>(n);
  }
  return ok_status();
}

}  // namespace sy
