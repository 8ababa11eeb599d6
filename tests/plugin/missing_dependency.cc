// A library the broken test plugin links against; the build puts it where
// the loader will not look, so loading the plugin fails on it.
extern "C" int sy_missing_dependency_marker() { return 42; }
