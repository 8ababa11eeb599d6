#!/usr/bin/env bash
# Runs every test: sets up and builds (scripts/setup.sh), exports the four
# reference models with PyTorch into build/models (again only when the
# export scripts changed), then ctest, then scripts/sanitizers.sh (ASan+UBSan,
# TSan and a two-minute fuzz run; SWITCHYARD_SANITIZERS=0 leaves them out).
# Ends with one line summing both: "N passed, N failed, N skipped".
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

log="$BUILD_DIR/ctest.log"
set +e
(cd "$BUILD_DIR" && ctest --output-on-failure -j "$(nproc)" --timeout 1500) 2>&1 | tee "$log"
ctest_rc=${PIPESTATUS[0]}
set -e
# ctest's own summary: "NN% tests passed, F tests failed out of T"; a test
# that reports itself skipped (no GPU here) is listed with "(Skipped)".
total=$(sed -nE 's/.*tests failed out of ([0-9]+).*/\1/p' "$log" | tail -n 1)
failed=$(sed -nE 's/.* ([0-9]+) tests failed out of.*/\1/p' "$log" | tail -n 1)
skipped=$(grep -c '(Skipped)' "$log" || true)
if [ -z "$total" ] || [ -z "$failed" ]; then
  total=1 failed=1 skipped=0  # ctest itself did not finish
fi
passed=$((total - failed - skipped))

san_rc=0
if [ "${SWITCHYARD_SANITIZERS:-1}" != "0" ]; then
  san_log="$BUILD_DIR/sanitizers.log"
  set +e
  ./scripts/sanitizers.sh 2>&1 | tee "$san_log"
  san_rc=${PIPESTATUS[0]}
  set -e
  # sanitizers.sh ends with "P passed, F failed" over its runs.
  line=$(tail -n 1 "$san_log")
  if [[ "$line" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
  else
    failed=$((failed + 1))
    [ "$san_rc" -eq 0 ] && san_rc=1
  fi
else
  echo "test: sanitizer runs left out (SWITCHYARD_SANITIZERS=0)"
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$ctest_rc" -eq 0 ] && [ "$san_rc" -eq 0 ] && [ "$failed" -eq 0 ]
