#!/usr/bin/env bash
# The device half of scripts/gpu_check.sh: runs on the lent GPU machine
# from a folder that the pack half filled here, with nothing to build and
# nothing to install. Every phase has its own time limit, writes its log
# under WORK/logs and a line to WORK/logs/phases.tsv; one failing phase does
# not stop the others. summary.py prints the table last.
#
#   scripts/gpu_check/device.sh PACK OUT          on the GPU machine
#   SY_GPU_CHECK_DRY_RUN=1 ... device.sh PACK OUT here: the CUDA parts are skipped
#
# OUT receives three files only (the device tool brings back at most eight):
# summary.md, cuda-cpu-strict.tsv and gpu-check-logs.tar.gz. The unpacked
# binaries, node tests, filled models and outputs stay in WORK.
#
# Environment: SY_GPU_CHECK_MODELS (default: every packed model),
# SY_GPU_CHECK_BUDGET_S (default 450: phases that would start after it are
# skipped, so the whole check stays under 8 minutes), SY_GPU_CHECK_WORK
# (default: a new folder under /tmp).
set -uo pipefail

PACK="$(cd "${1:?usage: device.sh PACK OUT}" && pwd)"
RESULTS="${2:?usage: device.sh PACK OUT}"
mkdir -p "$RESULTS"
RESULTS="$(cd "$RESULTS" && pwd)"
WORK="${SY_GPU_CHECK_WORK:-$(mktemp -d /tmp/sy-gpu-check.XXXXXX)}"
mkdir -p "$WORK/logs"
WORK="$(cd "$WORK" && pwd)"
OUT="$WORK/logs"
DRY="${SY_GPU_CHECK_DRY_RUN:-0}"
BUDGET="${SY_GPU_CHECK_BUDGET_S:-450}"
START=$SECONDS
HERE="$PACK/scripts"
PY="${SY_GPU_CHECK_PYTHON:-python3}"
MODELS="${SY_GPU_CHECK_MODELS:-$(cat "$PACK/models/list.txt")}"
: > "$OUT/phases.tsv"

# Unpack the binaries and the node suite (Python's tarfile reads xz with no
# xz command).
"$PY" - "$PACK" "$WORK/unpacked" <<'EOF' || { echo "device: cannot unpack $PACK"; exit 1; }
import sys, tarfile
pack, dest = sys.argv[1], sys.argv[2]
for name in ("binaries.tar.xz", "node.tar.xz"):
    with tarfile.open(f"{pack}/{name}") as t:
        if hasattr(tarfile, "data_filter"):
            t.extractall(dest, filter="data")
        else:
            t.extractall(dest)
EOF
BIN="$WORK/unpacked/bin"

# The packed Debian libraries, and the CUDA libraries that the image's
# Python wheels hold (nvidia-cublas, nvidia-cudnn: not on the loader's path).
LIBS="$WORK/unpacked/lib"
if [ "$DRY" != 1 ]; then
  WHEEL_LIBS="$("$PY" - <<'EOF' 2>/dev/null
import glob, os, sys
roots = set()
for p in sys.path:
    roots.update(glob.glob(os.path.join(p, "nvidia", "*", "lib")))
print(":".join(sorted(roots)))
EOF
)"
  [ -n "$WHEEL_LIBS" ] && LIBS="$LIBS:$WHEEL_LIBS"
  export VIRTUAL_ENV="${VIRTUAL_ENV:-$("$PY" -c 'import sys; print(sys.prefix)' 2>/dev/null)}"
fi
export LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SWITCHYARD_PROVIDER_PATH="$BIN"
SY="$BIN/switchyard"
JOBS="$(nproc)"

# phase NAME LIMIT_S COMMAND...: runs COMMAND with a time limit, its output
# in OUT/NAME.log, and records the exit code and seconds.
phase() {
  local name="$1" limit="$2"
  shift 2
  local used=$((SECONDS - START))
  if [ "$used" -ge "$BUDGET" ]; then
    printf '%s\tskipped\t0\tbudget of %s s used up\n' "$name" "$BUDGET" >> "$OUT/phases.tsv"
    echo "== $name: skipped (budget used up)"
    return 0
  fi
  if [ $((used + limit)) -gt "$BUDGET" ]; then limit=$((BUDGET - used)); fi
  echo "== $name (limit ${limit} s)"
  local t0=$SECONDS rc
  timeout --kill-after=10 "$limit" "$@" > "$OUT/$name.log" 2>&1
  rc=$?
  [ "$rc" -eq 124 ] && echo "   timed out after ${limit} s" >> "$OUT/$name.log"
  printf '%s\t%s\t%s\t\n' "$name" "$rc" "$((SECONDS - t0))" >> "$OUT/phases.tsv"
  tail -n 3 "$OUT/$name.log" | sed 's/^/   /'
}

skip() {
  printf '%s\tskipped\t0\t%s\n' "$1" "$2" >> "$OUT/phases.tsv"
  echo "== $1: skipped ($2)"
}

# ---- 1. what is here ---------------------------------------------------------
phase environment 60 bash -c "
  cat '$PACK/MANIFEST.txt'; echo
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv 2>&1 || echo 'nvidia-smi: not found'
  nproc; grep -m1 'model name' /proc/cpuinfo
  '$PY' -c 'import sys, numpy; print(\"python\", sys.version.split()[0], \"numpy\", numpy.__version__)'
  '$PY' -c 'import torch; print(\"torch\", torch.__version__, \"cuda\", torch.version.cuda, \"device\", torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)' 2>&1
  '$PY' -c 'import onnxruntime; print(\"onnxruntime\", onnxruntime.__version__)' 2>&1 | tail -1
  echo LD_LIBRARY_PATH=\$LD_LIBRARY_PATH"
if [ "$DRY" = 1 ]; then
  phase doctor 60 "$SY" doctor  # exits 1 where a provider named with --providers cannot run
else
  phase doctor 60 "$SY" doctor --providers cuda,cpu
fi

# ---- 2. the provider's own tests and the Session API on the device ------------
phase cuda_host_tests 90 "$BIN/cuda_host_tests" --gtest_output="json:$OUT/cuda_host_tests.json"
phase gpu_session_tests 90 "$BIN/gpu_session_tests" --gtest_output="json:$OUT/gpu_session_tests.json"

# ---- 3. the models, filled from their skeletons, against the CPU references ---
MODELDIR="$WORK/models"
mkdir -p "$MODELDIR"
phase models_fill 120 bash -c "
  set -e
  for m in $MODELS; do
    '$PY' '$HERE/skeleton.py' fill '$PACK/models/'\$m.skel.onnx '$MODELDIR/'\$m.onnx
    if [ '$DRY' != 1 ]; then '$PY' '$HERE/to_fp16.py' '$MODELDIR/'\$m.onnx '$MODELDIR/'\$m.fp16.onnx; fi
  done"
if [ "$DRY" = 1 ]; then
  # No CUDA here: the fp32 models through the CPU provider, which must
  # reproduce the references computed at packing time exactly.
  phase models_check 120 "$PY" "$HERE/check_models.py" --switchyard "$SY" --pack "$PACK" --models-dir "$MODELDIR" \
    --out "$OUT" --providers cpu --dtypes fp32 --models "$MODELS"
else
  phase models_check 180 "$PY" "$HERE/check_models.py" --switchyard "$SY" --pack "$PACK" --models-dir "$MODELDIR" \
    --out "$OUT" --providers cuda,cpu --provider-option cuda:use_tf32=0 --dtypes fp32,fp16 --models "$MODELS"
fi

# ---- 4. speed against PyTorch eager on the same GPU (before the node suite:
# the goals are here, and the budget may not reach the end) ----------------
if [ "$DRY" = 1 ]; then
  phase bench_gpu 120 "$PY" "$HERE/bench_gpu.py" --switchyard "$SY" --models-dir "$MODELDIR" --bench-models "$PACK/bench_models" \
    --out "$OUT" --dry-run --models "$MODELS"
else
  phase bench_gpu 200 "$PY" "$HERE/bench_gpu.py" --switchyard "$SY" --models-dir "$MODELDIR" --bench-models "$PACK/bench_models" \
    --out "$OUT"
fi

# ---- 5. the ONNX node suite -----------------------------------------------------
NODE="$WORK/unpacked"
RUNNER="$BIN/onnx_node_tests"
if [ "$DRY" = 1 ]; then
  # The CUDA run must report itself skipped here (exit 77) ...
  phase node_suite_cuda 60 "$RUNNER" --node-dir "$NODE/node" --providers cuda,cpu --skip-unavailable \
    --expectations "$PACK/expectations/cpu.tsv"
  # ... and the packed runner and tests work, shown on a slice through the CPU.
  phase node_suite_cpu_slice 120 "$RUNNER" --node-dir "$NODE/node" --providers cpu --jobs "$JOBS" \
    --filter '^test_(abs|add|conv|matmul|relu|softmax)' --expectations "$PACK/expectations/cpu.tsv"
else
  # Every test the CPU passes must pass with CUDA first (fall-through allowed) ...
  phase node_suite_cuda 120 "$RUNNER" --node-dir "$NODE/node" --providers cuda,cpu \
    --provider-option cuda:use_tf32=0 --jobs "$JOBS" --timeout 60 --expectations "$PACK/expectations/cpu.tsv" --by-op
  # ... and in strict mode, every test whose nodes CUDA takes whole; the
  # rest is written out as the CUDA expectations file.
  cp "$PACK/expectations/cpu.tsv" "$OUT/cuda-cpu-strict.tsv"
  phase node_suite_cuda_strict 120 "$RUNNER" --node-dir "$NODE/node" --providers cuda,cpu --strict \
    --provider-option cuda:use_tf32=0 --jobs "$JOBS" --timeout 60 --expectations "$OUT/cuda-cpu-strict.tsv" \
    --update-expectations
fi

# ---- 6. with time left: the CPU provider against onnxruntime at 1-16 threads ----
if [ "$DRY" = 1 ]; then
  phase cpu_scaling 60 "$PY" "$HERE/cpu_scaling.py" --switchyard "$SY" --models-dir "$MODELDIR" --out "$OUT" \
    --threads 1 --runs 2 --models "$MODELS"
else
  phase cpu_scaling 150 "$PY" "$HERE/cpu_scaling.py" --switchyard "$SY" --models-dir "$MODELDIR" --out "$OUT" \
    --threads 1,4,8,16 --runs 10 --models "$MODELS"
fi

# ---- the summary table, last ----------------------------------------------------
"$PY" "$HERE/summary.py" --out "$OUT" --pack "$PACK" --seconds $((SECONDS - START)) --dry-run "$DRY" > "$OUT/summary.txt"
cp "$OUT/summary.md" "$RESULTS/summary.md"
[ -f "$OUT/cuda-cpu-strict.tsv" ] && cp "$OUT/cuda-cpu-strict.tsv" "$RESULTS/"
cp "$OUT/phases.tsv" "$RESULTS/phases.tsv"
tar czf "$RESULTS/gpu-check-logs.tar.gz" -C "$WORK" logs
echo
echo "results in $RESULTS (summary.md, phases.tsv, gpu-check-logs.tar.gz); work files in $WORK"
echo
cat "$OUT/summary.txt"
