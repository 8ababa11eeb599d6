#!/usr/bin/env bash
# `switchyard run` with sequence and optional inputs and outputs: a sequence
# is given as --input NAME=A.npy,B.npy and printed element by element, an
# optional not given is empty and printed "none". The models are the Python
# tests' (tests/python/sy_models.py), written with Debian's onnx.
# usage: sequences.sh SWITCHYARD_BINARY SOURCE_DIR
# Exit 77 (skipped) where Debian's Python has no onnx.
set -u
bin=$1
src=$2
py=/usr/bin/python3
if ! "$py" -c "import onnx, numpy" 2>/dev/null; then
  echo "skipped: $py cannot import onnx and numpy"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
PYTHONPATH="$src/tests/python" "$py" - "$dir" <<'EOF' || exit 1
import sys
import numpy as np
import sy_models
d = sys.argv[1]
sy_models.save(sy_models.sequence_model(), f"{d}/seq.onnx")
sy_models.save(sy_models.sequence_model(concat=False), f"{d}/seq_only.onnx")
sy_models.save(sy_models.optional_model(), f"{d}/opt.onnx")
np.save(f"{d}/a.npy", np.array([1, 2], np.float32))
np.save(f"{d}/b.npy", np.array([3], np.float32))
np.save(f"{d}/i.npy", np.array([4], np.int64))
EOF

# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"

# A sequence input from two files; sequence outputs one line per element.
expect 0 '^input  s: seq\(float\) of 2 from .*/a.npy,.*/b.npy$' run "$dir/seq.onnx" --input "s=$dir/a.npy,$dir/b.npy"
expect 0 '^output s_out: seq\(float\) of 2$' run "$dir/seq.onnx" --input "s=$dir/a.npy,$dir/b.npy"
expect 0 '^  \[0\] float\[2\] min 1 max 2 mean 1.5 first \[1, 2\]$' run "$dir/seq.onnx" --input "s=$dir/a.npy,$dir/b.npy"
expect 0 '^  \[1\] float\[1\] min 3 max 3 mean 3 first \[3\]$' run "$dir/seq.onnx" --input "s=$dir/a.npy,$dir/b.npy"
expect 0 '^output n: int64\[\] min 2 max 2' run "$dir/seq.onnx" --input "s=$dir/a.npy,$dir/b.npy"
expect 0 '^output cat: float\[3\] min 1 max 3 mean 2 first \[1, 2, 3\]$' run "$dir/seq.onnx" --input "s=$dir/a.npy,$dir/b.npy"
expect 0 '^  \[2\] float\[1\] min 3 max 3' run "$dir/seq.onnx" --input "s=$dir/a.npy,$dir/b.npy"
# Nothing after '=': an empty sequence.
expect 0 '^output s_out: seq\(float\) of 0$' run "$dir/seq_only.onnx" --input "s="
# A sequence cannot be made up; one of the wrong element type is refused.
expect 2 "input 's' is seq\(tensor\(float\)\); give its elements with --input s=A.npy,B.npy" run "$dir/seq.onnx"
expect 1 "input 's': expected seq\(tensor\(float\)\), got an element of type tensor\(int64\) \(element 1\)" \
  run "$dir/seq.onnx" --input "s=$dir/a.npy,$dir/i.npy"
expect 1 "input 's': element 1: .*missing.npy" run "$dir/seq.onnx" --input "s=$dir/a.npy,$dir/missing.npy"
# Optionals: empty when not given, printed "none"; or given like a tensor / sequence.
expect 0 '^output o_out: none$' run "$dir/opt.onnx"
expect 0 '^output has: bool\[\] min 0 max 0' run "$dir/opt.onnx"
expect 0 '^output o_out: float\[2\] min 1 max 2' run "$dir/opt.onnx" --input "o=$dir/a.npy" --input "os=$dir/b.npy"
expect 0 '^output os_out: seq\(float\) of 1$' run "$dir/opt.onnx" --input "o=$dir/a.npy" --input "os=$dir/b.npy"
# --save-outputs: a sequence one file per element, into a folder made when
# missing (nested too); a folder that cannot be made is an error.
expect 0 "saved to $dir/out/s_out.1.npy" run "$dir/seq.onnx" --input "s=$dir/a.npy,$dir/b.npy" --save-outputs "$dir/out"
expect 0 "saved to $dir/new/deep/s_out.0.npy" run "$dir/seq.onnx" --input "s=$dir/a.npy,$dir/b.npy" \
  --save-outputs "$dir/new/deep"
expect 1 "--save-outputs: cannot create folder $dir/a.npy/x" run "$dir/seq.onnx" --input "s=$dir/a.npy,$dir/b.npy" \
  --save-outputs "$dir/a.npy/x"
if [ -d "$dir/out" ] && ! "$py" -c "import numpy as np, sys; assert np.load(sys.argv[1]).tolist() == [3.0]" \
    "$dir/out/s_out.1.npy"; then
  failed=$((failed + 1))
  echo "FAIL: $dir/out/s_out.1.npy does not hold [3]"
fi

echo "$((count - failed)) of $count passed"
[ "$failed" -eq 0 ]
