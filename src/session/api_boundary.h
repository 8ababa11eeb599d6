// at_api_boundary: the wrapper every public API function of the session
// runs its body in (session.cc, io_binding.cc, device_memory.cc).
#pragma once

#include <exception>
#include <new>
#include <string>

#include "switchyard/status.h"

namespace sy {

// Runs the body of a public API function so that no C++ exception leaves
// it: the API promises a Status, and an exception crossing into a caller
// that expects none (the Python module, a C program through a shim) ends
// the process. std::bad_alloc (a std::vector growing under a memory limit)
// becomes OutOfMemory; anything else is a bug and becomes Internal with
// its what(). `what()` says what the call was doing; it is called only
// when something was thrown, so Session::run builds no string per call.
template <typename What, typename Body>
auto at_api_boundary(What&& what, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory, "out of memory (std::bad_alloc) while " + std::string(what()));
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal, "unexpected exception while " + std::string(what()) + ": " + e.what());
  } catch (...) {
    return Status(StatusCode::kInternal, "unexpected exception of unknown type while " + std::string(what()));
  }
}

}  // namespace sy
