#!/usr/bin/env bash
# A provider plugin built out of tree against the installed provider SDK
# alone, then run in a session (ctest: provider_sdk_out_of_tree):
#
#   1. install the SDK component of BUILD_DIR into a fresh prefix, and check
#      it holds the ABI, the SDK's headers and data_type.h, nothing else;
#   2. compile each installed header by itself with only the prefix on the
#      include path (each must stand alone);
#   3. copy examples/provider_plugin out of the source tree and configure
#      and build it with CMake against the prefix (CMAKE_PREFIX_PATH);
#   4. load the plugin into a session and check placement, reasons and
#      outputs (example_plugin_check).
#
#   out_of_tree_plugin.sh BUILD_DIR SOURCE_DIR EXAMPLE_PLUGIN_CHECK CXX
set -euo pipefail
build=$1 source=$2 check=$3 cxx=$4

# Inside the build tree, at a fixed path, so that ccache hits on the next
# run and a failure can be looked at.
work=$build/tests/provider_sdk_out_of_tree
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
step() { echo "out_of_tree_plugin: $*"; }

step "installing the provider_sdk component into $prefix"
cmake --install "$build" --prefix "$prefix" --component provider_sdk > "$work/install.log"
expected=$( (cd "$source/include" && ls switchyard/provider_abi.h switchyard/data_type.h switchyard/provider_sdk/*.h) | sort)
installed=$( (cd "$prefix/include" && find . -type f | sed 's|^\./||') | sort)
if [ "$(cd "$prefix" && find . -type f | grep -vc '^\./include/')" != 0 ] || [ "$installed" != "$expected" ]; then
  echo "out_of_tree_plugin: FAILED: the component installs"
  (cd "$prefix" && find . -type f | sort)
  echo "expected include/ with"
  echo "$expected"
  exit 1
fi

step "compiling each installed header alone"
for header in $installed; do
  echo "#include \"$header\"" |
    "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Werror -I"$prefix/include" -x c++ - ||
    { echo "out_of_tree_plugin: FAILED: $header does not compile alone against $prefix"; exit 1; }
done
# The ABI is C.
echo '#include "switchyard/provider_abi.h"' |
  "${CC:-cc}" -std=c99 -fsyntax-only -Wall -Wextra -Wpedantic -Werror -I"$prefix/include" -x c - ||
  { echo "out_of_tree_plugin: FAILED: provider_abi.h does not compile as C"; exit 1; }

step "configuring and building examples/provider_plugin against $prefix"
cp -r "$source/examples/provider_plugin" "$work/src"
launcher=()
if command -v ccache > /dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}" > "$work/configure.log" ||
  { cat "$work/configure.log"; echo "out_of_tree_plugin: FAILED: configuring the example"; exit 1; }
grep -q "Switchyard provider SDK: $prefix/include" "$work/configure.log" ||
  { cat "$work/configure.log"; echo "out_of_tree_plugin: FAILED: the example found the SDK elsewhere"; exit 1; }
cmake --build "$work/build" ||
  { echo "out_of_tree_plugin: FAILED: building the example"; exit 1; }

step "loading the plugin into a session"
"$check" "$work/build"
