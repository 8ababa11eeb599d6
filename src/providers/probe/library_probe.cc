#include "providers/probe/library_probe.h"

#include "core/environment.h"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>

#include <cstdlib>
#include <filesystem>

namespace sy {
namespace {

void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (s.empty()) return;
  for (const std::string& x : v)
    if (x == s) return;
  v.push_back(s);
}

void add_glob(std::vector<std::string>& v, const std::string& pattern) {
  glob_t g{};
  if (glob(pattern.c_str(), GLOB_ONLYDIR, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) add_unique(v, g.gl_pathv[i]);
  globfree(&g);
}

}  // namespace

std::vector<std::string> library_search_path() {
  std::vector<std::string> dirs;
  for (const std::string& d : split_path_list(env_value("LD_LIBRARY_PATH"))) add_unique(dirs, d);
  add_unique(dirs, "/usr/local/cuda/lib64");
  add_unique(dirs, "/usr/local/cuda/targets/x86_64-linux/lib");
  // pip's nvidia-*-cu12 / -cu13 wheels put their libraries here.
  for (const char* site : {"/usr/lib/python3/dist-packages", "/usr/local/lib/python3*/dist-packages",
                           "/usr/local/lib/python3*/site-packages"}) {
    add_glob(dirs, std::string(site) + "/nvidia/*/lib");
  }
  add_unique(dirs, "/usr/lib/x86_64-linux-gnu");
  add_unique(dirs, "/lib/x86_64-linux-gnu");
  add_unique(dirs, "/usr/lib64");
  add_unique(dirs, "/usr/lib");
  return dirs;
}

LibraryProbe probe_library(const std::string& soname) {
  LibraryProbe p;
  p.soname = soname;
  p.searched = library_search_path();
  std::error_code ec;
  for (const std::string& dir : p.searched) {
    const std::filesystem::path candidate = std::filesystem::path(dir) / soname;
    if (std::filesystem::exists(candidate, ec)) {
      p.found = true;
      p.path = candidate.string();
      break;
    }
  }
  // The loader may know it from ld.so.cache even when no folder above has it.
  void* handle = dlopen(p.found ? p.path.c_str() : soname.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle != nullptr) {
    p.loads = true;
    if (!p.found) {
      p.found = true;
      link_map* map = nullptr;
      if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr)
        p.path = map->l_name;
      else
        p.path = soname + " (via the loader's cache)";
    }
    // The library stays loaded. Unloading one whose constructors ran leaks
    // what they allocated (cuBLAS and cuDNN allocate at load and free
    // nothing at unload, which LeakSanitizer reports), and the provider
    // that needs it loads it again anyway.
    (void)handle;
  } else {
    const char* e = dlerror();
    p.error = e ? e : "dlopen failed";
  }
  return p;
}

LibraryProbe probe_first_library(const std::vector<std::string>& sonames) {
  LibraryProbe last;
  for (const std::string& s : sonames) {
    last = probe_library(s);
    if (last.found) return last;
  }
  return last;
}

}  // namespace sy
