#!/usr/bin/env bash
# The GPU check, prepared here so that a lent GPU machine only runs it.
#
#   scripts/gpu_check.sh                  pack into gpu-pack/ (git-ignored), here
#   scripts/gpu_check.sh --device [PACK]  the device half, on the GPU machine
#                                         (writes under $OUT, prints the summary last)
#   scripts/gpu_check.sh --dry-run        pack into build/gpu-pack-dry/, then run the
#                                         device half here with the CUDA parts skipped
#
# The device call (the `run` tool), after packing here:
#   command: bash scripts/gpu_check.sh --device gpu-pack   carry: ["gpu-pack"]   timeout_s: 540
#
# What the pack holds (it must stay under 60 MiB: the call carries at most
# 64 MiB with the working tree):
#   binaries.tar.xz   bin/: the switchyard CLI, libswitchyard_cuda.so,
#             onnx_node_tests, cuda_host_tests, gpu_session_tests (stripped);
#             lib/: the Debian shared libraries they load that are not glibc
#             or GCC's runtime (protobuf, libonnx, ...), found with ldd
#   node.tar.xz, expectations/cpu.tsv   the ONNX node suite and what the CPU passes
#   models/   <model>.skel.onnx: each exported model without its large float
#             weights (scripts/gpu_check/skeleton.py keeps their mean and
#             std; the device fills them again, bit for bit as here);
#             <model>.inputs/ and <model>.ref/: the inputs and the outputs
#             Switchyard's CPU provider computes for the filled model here
#             (GPT-2 on the first 16 tokens of its input: its logits for all
#             128 would be 25 MB)
#   bench_models/, scripts/   bench/models (for PyTorch's side) and the
#             device half's scripts
#
# The full models do not fit (ResNet-50, BERT and GPT-2 are about 1 GB of
# float32 weights), so they travel as skeletons; their float16 versions are
# made there from the filled float32 ones (bench/models/to_fp16.py).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
PY=/usr/bin/python3  # Debian's: it sees Debian's numpy and onnx
BUILD_DIR="${BUILD_DIR:-build}"
MODELS_SRC="${SY_GPU_CHECK_MODELS_DIR:-$BUILD_DIR/models}"
PACK_MODELS="resnet50 mobilenetv2 bert gpt2 lstm"
MAX_PACK_MIB=60

mode=pack
pack=gpu-pack
case "${1:-}" in
  --device)
    exec bash "$ROOT/scripts/gpu_check/device.sh" "${2:-gpu-pack}" "${OUT:-$ROOT/gpu-check-out}"
    ;;
  --dry-run) mode=dry; pack="$BUILD_DIR/gpu-pack-dry" ;;
  "") ;;
  -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
  *) echo "gpu_check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac

need() {
  if [ ! -e "$1" ]; then
    echo "gpu_check: $1 is missing: $2" >&2
    exit 1
  fi
}

# ---- binaries ------------------------------------------------------------------
rm -rf "$pack"
mkdir -p "$pack/bin" "$pack/lib" "$pack/models" "$pack/expectations" "$pack/scripts" "$pack/bench_models"
need "$BUILD_DIR/switchyard" "build first (scripts/setup.sh)"
bins=("$BUILD_DIR/switchyard" "$BUILD_DIR/tests/conformance/onnx_node_tests" "$BUILD_DIR/tests/gpu_session_tests")
cuda_built=1
for f in "$BUILD_DIR/libswitchyard_cuda.so" "$BUILD_DIR/src/providers/cuda/cuda_host_tests"; do
  if [ -e "$f" ]; then
    bins+=("$f")
  else
    cuda_built=0
  fi
done
if [ "$cuda_built" = 0 ]; then
  if [ "$mode" = pack ]; then
    echo "gpu_check: the CUDA provider is not built (no nvcc?): nothing to check on a GPU" >&2
    exit 1
  fi
  echo "gpu_check: the CUDA provider is not built here; the dry run goes on without it"
fi
for f in "${bins[@]}"; do
  need "$f" "build first (scripts/setup.sh)"
  cp "$f" "$pack/bin/"
  strip --strip-unneeded "$pack/bin/$(basename "$f")"
done

# Shared libraries the device image may lack: everything ldd resolves
# outside glibc and GCC's runtime, which any Linux with a newer glibc has.
for f in "$pack"/bin/*; do
  ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*) ;;
    *) cp -L "$lib" "$pack/lib/" ;;
  esac
done

# ---- the node suite ----------------------------------------------------------------
NODE_ROOT="$(cd "$ROOT/../shared/onnx-backend-tests" && pwd)"
tar cJf "$pack/node.tar.xz" -C "$NODE_ROOT" node
cp tests/conformance/expectations/cpu.tsv "$pack/expectations/"

# ---- models: skeletons, inputs and the CPU's reference outputs ---------------------
work="$BUILD_DIR/gpu-check-work"
rm -rf "$work"
mkdir -p "$work"
for m in $PACK_MODELS; do
  need "$MODELS_SRC/$m.onnx" "export the models first (bench/models/export_all.py --out $MODELS_SRC)"
  $PY scripts/gpu_check/skeleton.py strip "$MODELS_SRC/$m.onnx" "$pack/models/$m.skel.onnx"
  $PY scripts/gpu_check/skeleton.py fill "$pack/models/$m.skel.onnx" "$work/$m.onnx"
  cp -r "$MODELS_SRC/$m.inputs" "$pack/models/$m.inputs"
  if [ "$m" = gpt2 ]; then
    $PY -c "import numpy as np, sys; a = np.load(sys.argv[1]); np.save(sys.argv[1], np.ascontiguousarray(a[:, :16]))" \
      "$pack/models/$m.inputs/input_ids.npy"
  fi
  mkdir -p "$pack/models/$m.ref"
  inputs=()
  for f in "$pack/models/$m.inputs"/*.npy; do inputs+=(--input "$(basename "$f" .npy)=$f"); done
  "$BUILD_DIR/switchyard" run "$work/$m.onnx" --providers cpu "${inputs[@]}" --save-outputs "$pack/models/$m.ref" \
    > "$work/$m.ref.log"
  rm "$work/$m.onnx"
done
echo "$PACK_MODELS" > "$pack/models/list.txt"
# A reference with NaN or inf in it would pass anything or nothing.
$PY - "$pack/models" <<'EOF'
import glob, sys
import numpy as np
bad = [f for f in glob.glob(sys.argv[1] + "/*.ref/*.npy") if not np.isfinite(np.load(f).astype(np.float64)).all()]
if bad:
    sys.exit("gpu_check: non-finite reference outputs: " + ", ".join(bad))
EOF

# Binaries and libraries compress to a sixth with xz (the device unpacks
# them with Python's tarfile, which needs no xz command there).
tar cJf "$pack/binaries.tar.xz" -C "$pack" bin lib
rm -rf "$pack/bin" "$pack/lib"

cp scripts/gpu_check/*.py scripts/gpu_check/device.sh bench/models/to_fp16.py "$pack/scripts/"
cp bench/models/*.py "$pack/bench_models/"
{
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "packed: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
  echo "models: $PACK_MODELS (skeletons, filled on the device)"
  echo "CUDA provider built: $([ "$cuda_built" = 1 ] && echo yes || echo no)"
  echo "binaries: $(tar tJf "$pack/binaries.tar.xz" | grep -v '/$' | tr '\n' ' ')"
} > "$pack/MANIFEST.txt"

size_kib="$(du -sk "$pack" | cut -f1)"
echo "gpu_check: packed $pack: $((size_kib / 1024)) MiB ($size_kib KiB)"
du -sh "$pack"/* | sed 's/^/  /'
if [ "$size_kib" -gt $((MAX_PACK_MIB * 1024)) ]; then
  echo "gpu_check: the pack is over $MAX_PACK_MIB MiB: it would not travel with the working tree" >&2
  exit 1
fi

if [ "$mode" = pack ]; then
  echo "gpu_check: next, on the device: bash scripts/gpu_check.sh --device $pack   (carry: [\"$pack\"], timeout_s 540)"
  exit 0
fi

# ---- dry run: the device half here, CUDA parts skipped ----------------------------
out="$BUILD_DIR/gpu-check-dry-out"
rm -rf "$out"
SY_GPU_CHECK_DRY_RUN=1 SY_GPU_CHECK_MODELS="${SY_GPU_CHECK_DRY_MODELS:-mobilenetv2}" SY_GPU_CHECK_PYTHON="$PY" \
  SY_GPU_CHECK_WORK="$out/work" bash scripts/gpu_check/device.sh "$pack" "$out"
# Every phase that ran must have passed (a CUDA phase reports itself skipped: 77).
if awk -F'\t' '$2 != "0" && $2 != "77" && $2 != "skipped" {bad = 1} END {exit !bad}' "$out/phases.tsv"; then
  echo "gpu_check: dry run FAILED: phases with another exit code:" >&2
  awk -F'\t' '$2 != "0" && $2 != "77" && $2 != "skipped"' "$out/phases.tsv" >&2
  exit 1
fi
echo "gpu_check: dry run passed ($out)"
