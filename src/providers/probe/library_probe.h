// Finding and loading shared libraries by soname, for diagnostics: which
// file a name resolves to in which folder, or every folder searched.
#pragma once

#include <string>
#include <vector>

namespace sy {

struct LibraryProbe {
  std::string soname;
  bool found = false;         // a file with that name exists in a searched folder
  std::string path;           // where
  bool loads = false;         // dlopen succeeded
  std::string error;          // dlerror() when it did not
  std::vector<std::string> searched;
};

// The folders searched, in order: LD_LIBRARY_PATH, /usr/local/cuda's lib
// folders, the lib folders of NVIDIA's Python packages, the system folders.
std::vector<std::string> library_search_path();

// Looks for `soname` in library_search_path(), then asks the dynamic
// loader (which also knows ld.so.cache), and dlopens it to see if it loads.
LibraryProbe probe_library(const std::string& soname);

// The first of `sonames` that is found (e.g. libcudnn.so.9 then .8); the
// probe of the last one if none is.
LibraryProbe probe_first_library(const std::vector<std::string>& sonames);

}  // namespace sy
