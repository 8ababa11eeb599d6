#!/usr/bin/env bash
# Runs every test: sets up and builds (scripts/setup.sh), exports the four
# reference models with PyTorch into build/models (again only when the
# export scripts changed), then ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
BUILD_DIR="${BUILD_DIR:-build}"

models="$BUILD_DIR/models"
stamp="$models/.export-stamp"
want="$(cat bench/models/*.py | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  # Debian's Python: the one that sees Debian's torch and numpy.
  /usr/bin/python3 bench/models/export_all.py --out "$models"
  echo "$want" > "$stamp"
else
  echo "test: models in $models are up to date"
fi

cd "$BUILD_DIR"
ctest --output-on-failure -j "$(nproc)" --timeout 1500
