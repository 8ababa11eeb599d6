#!/usr/bin/env bash
# Installs every dependency from Debian's apt and builds Switchyard into
# build/. Safe to run again: apt skips what is installed, ninja and ccache
# skip what is built. Run as root, or as a user with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libprotobuf-dev protobuf-compiler libonnx-dev libre2-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # ImageDecoder: JPEG, PNG, WebP and JPEG 2000.
  libjpeg62-turbo-dev libpng-dev libwebp-dev libopenjp2-7-dev
  python3 python3-dev python3-venv python3-numpy python3-onnx python3-pytest pybind11-dev
  python3-torch python3-torchvision python3-sklearn
  # scripts/sanitizers.sh: clang with its sanitizer and libFuzzer runtimes.
  clang libclang-rt-14-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup: installing ${missing[*]}"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

BUILD_DIR="${BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" -j "$(nproc)"
echo "setup: built into $BUILD_DIR/ (CLI: $BUILD_DIR/switchyard)"

# Python: a venv that sees Debian's numpy/onnx/pytest and finds the built module.
/usr/bin/python3 -m venv --system-site-packages --without-pip .venv
SITE="$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$PWD/$BUILD_DIR/python" > "$SITE/switchyard-build.pth"
echo "setup: Python: .venv/bin/python -c 'import switchyard'  (or PYTHONPATH=$PWD/$BUILD_DIR/python /usr/bin/python3)"
