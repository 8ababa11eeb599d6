#!/usr/bin/env bash
# Sanitizer and fuzzing runs; scripts/test.sh calls this after the main
# suite, and it ends with one summary line.
#
#   build-asan/  clang, -O0, AddressSanitizer + UndefinedBehaviorSanitizer,
#                libFuzzer coverage; no CUDA, no Python module:
#                  - the unit tests but the slow sweeps listed in
#                    tests/sanitizers/too_slow_under_asan.txt
#                  - the ONNX node suite against its expectations
#                  - the saved fuzzer findings, then fuzz_model for
#                    SY_FUZZ_SECONDS (default 120) from the node suite's models
#   build-tsan/  clang, -O0, ThreadSanitizer: concurrency_tests (the thread
#                pool, and one session run from many threads)
#
# Usage: scripts/sanitizers.sh [asan|tsan|fuzz]...   (default: all three)
# Environment: SY_JOBS (build and test jobs, default nproc), SY_SANITIZE_OPT
# (default -O0), SY_FUZZ_SECONDS (default 120).
# Clean means clean: no suppression files; a sanitizer report fails the run.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
NODE_DIR="$ROOT/../shared/onnx-backend-tests/node"
JOBS="${SY_JOBS:-$(nproc)}"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(asan tsan fuzz)

passed=0
failed=0
failures=()
record() {  # record NAME EXIT_CODE
  if [ "$2" -eq 0 ]; then
    passed=$((passed + 1))
    echo "sanitizers: $1 passed"
  else
    failed=$((failed + 1))
    failures+=("$1")
    echo "sanitizers: $1 FAILED (exit $2)"
  fi
}

configure() {  # configure DIR SANITIZERS [extra cmake args...]
  local dir="$1" sanitize="$2"
  shift 2
  # -O0 by default: clang with ASan builds the kernels five times faster at
  # -O0 than at -O1 (reduce.cc: 24 s against 127 s), which is what lets CI
  # afford two sanitizer builds; SY_SANITIZE_OPT=-O1 for long fuzzing runs,
  # where executions per second matter more. Line tables make the reports
  # point at source lines.
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_CXX_FLAGS_RELEASE="${SY_SANITIZE_OPT:--O0} -gline-tables-only" \
    -DSWITCHYARD_SANITIZE="$sanitize" -DSWITCHYARD_CUDA=OFF -DSWITCHYARD_PYTHON=OFF "$@" > "$dir/configure.log" 2>&1 \
    || { cat "$dir/configure.log"; return 1; }
}

# ASan: abort on the first report; refuse huge allocations by returning null
# (the code under test must turn that into an OutOfMemory status) rather than
# letting one test take the machine's memory.
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=4096:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"

for step in "${steps[@]}"; do
  case "$step" in
    asan)
      mkdir -p build-asan
      if configure build-asan address,undefined -DSWITCHYARD_FUZZ=ON &&
         cmake --build build-asan -j "$JOBS" --target unit_tests onnx_node_tests fuzz_model fuzz_model_replay; then
        # The unit tests less the slow sweeps (tests/sanitizers/
        # too_slow_under_asan.txt says which and why), in JOBS shards at once.
        skip=$(grep -v -e '^#' -e '^$' tests/sanitizers/too_slow_under_asan.txt | paste -sd: -)
        pids=()
        for ((shard = 0; shard < JOBS; shard++)); do
          GTEST_TOTAL_SHARDS="$JOBS" GTEST_SHARD_INDEX="$shard" build-asan/tests/unit_tests --gtest_brief=1 \
            --gtest_filter="-$skip" > "build-asan/unit_tests.shard$shard.log" 2>&1 &
          pids+=($!)
        done
        rc=0
        for ((shard = 0; shard < JOBS; shard++)); do
          wait "${pids[$shard]}" || rc=1
          tail -n 30 "build-asan/unit_tests.shard$shard.log"
        done
        record "asan+ubsan unit_tests (less tests/sanitizers/too_slow_under_asan.txt)" "$rc"
        build-asan/tests/conformance/onnx_node_tests --node-dir "$NODE_DIR" --providers cpu --jobs "$JOBS" --timeout 180 \
          --expectations tests/conformance/expectations/cpu.tsv 2>&1 | tail -n 20
        record "asan+ubsan onnx_node_tests" "${PIPESTATUS[0]}"
      else
        record "asan+ubsan build" 1
      fi
      ;;
    fuzz)
      if [ ! -x build-asan/tests/fuzz_model ]; then
        record "fuzz (needs the asan step's build)" 1
        continue
      fi
      build-asan/tests/fuzz_model_replay tests/fuzz/regressions 2>&1 | tail -n 3
      record "fuzz regressions under asan+ubsan" "${PIPESTATUS[0]}"
      corpus="build-asan/fuzz-corpus"
      mkdir -p "$corpus" build-asan/fuzz-findings
      /usr/bin/python3 tests/fuzz/make_dict.py > build-asan/onnx.dict
      seconds="${SY_FUZZ_SECONDS:-120}"
      # Seeds: the node suite's models (all under max_len), one file each.
      mkdir -p build-asan/fuzz-seeds
      find "$NODE_DIR" -name model.onnx -size -64k | while read -r f; do
        cp "$f" "build-asan/fuzz-seeds/$(basename "$(dirname "$f")").onnx"
      done
      build-asan/tests/fuzz_model "$corpus" build-asan/fuzz-seeds -dict=build-asan/onnx.dict \
        -max_total_time="$seconds" -max_len=65536 -timeout=20 -rss_limit_mb=4096 -malloc_limit_mb=4096 \
        -artifact_prefix=build-asan/fuzz-findings/ -print_final_stats=1 > build-asan/fuzz.log 2>&1
      rc=$?
      grep -E "^(stat::|Done|#[0-9]+ +DONE)|ERROR|SUMMARY" build-asan/fuzz.log | tail -n 12
      record "fuzz_model ${seconds} s" "$rc"
      ;;
    tsan)
      mkdir -p build-tsan
      if configure build-tsan thread && cmake --build build-tsan -j "$JOBS" --target concurrency_tests; then
        build-tsan/tests/concurrency_tests --gtest_brief=1 2>&1 | tail -n 20
        record "tsan concurrency tests" "${PIPESTATUS[0]}"
      else
        record "tsan build" 1
      fi
      ;;
    *) echo "sanitizers: unknown step '$step' (asan, tsan, fuzz)"; exit 2 ;;
  esac
done

[ ${#failures[@]} -gt 0 ] && echo "sanitizers: failed: ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
