#!/usr/bin/env bash
# Runs every test: sets up and builds (scripts/setup.sh), exports the four
# reference models with PyTorch (cached in build/models), then ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
BUILD_DIR="${BUILD_DIR:-build}"
# Debian's Python: the one that sees Debian's torch and numpy.
/usr/bin/python3 bench/models/export_all.py --out "$BUILD_DIR/models"
cd "$BUILD_DIR"
ctest --output-on-failure -j "$(nproc)" --timeout 1500
