#!/usr/bin/python3
"""Times one of the bench/models PyTorch models (the definitions the ONNX
files were exported from) and prints one JSON line with the fields
`switchyard bench --json` prints.

    /usr/bin/python3 bench/torch_bench.py MODEL --threads N --runs R [--warmup W]
        [--input NAME=FILE.npy ...]

MODEL is a module name in bench/models (resnet50, mobilenetv2, bert, gpt2).
Inputs not given by --input keep the example tensors make() returns.
session_create_ms is the time to build the module with make(seed=0) (random
initialisation, and for the CNNs the BatchNorm calibration passes), which is
not the same work as loading an ONNX file; compare it with care.
"""

import argparse
import importlib
import json
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "models"))


def percentile(sorted_times, p):
    if not sorted_times:
        return 0.0
    i = min(len(sorted_times) - 1, int(p * (len(sorted_times) - 1) + 0.5))
    return sorted_times[i]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-seconds", type=float, default=0.0,
                        help="stop warming up / timing once this much time is spent, after at least "
                             "--min-runs timed runs (0: no cap); for slow BLAS builds")
    parser.add_argument("--min-runs", type=int, default=2)
    args = parser.parse_args()
    if args.threads < 1 or args.runs < 1 or args.warmup < 0:
        parser.error("--threads and --runs must be >= 1, --warmup >= 0")

    files = {}
    for item in args.input:
        name, eq, file = item.partition("=")
        if not eq:
            parser.error(f"--input takes NAME=FILE.npy, got '{item}'")
        files[name] = file

    import numpy as np
    import torch

    # Both must be set before any parallel work starts; interop 1 matches the
    # sequential execution of the other two runtimes.
    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass

    t0 = time.perf_counter()
    spec = importlib.import_module(args.model).make(small=False, seed=args.seed)
    module = spec.module.eval()
    create_ms = (time.perf_counter() - t0) * 1000

    unknown = set(files) - set(spec.inputs)
    if unknown:
        print(f"error: model {args.model} has no input(s) {sorted(unknown)}; it takes {list(spec.inputs)}",
              file=sys.stderr)
        return 2
    inputs = []
    for name, example in spec.inputs.items():
        if name in files:
            array = np.load(files[name])
            tensor = torch.from_numpy(np.ascontiguousarray(array))
            if tensor.dtype != example.dtype:
                print(f"error: input {name}: {files[name]} holds {tensor.dtype}, model expects {example.dtype}",
                      file=sys.stderr)
                return 2
            inputs.append(tensor)
        else:
            inputs.append(example)

    def run_once():
        a = time.perf_counter()
        module(*inputs)
        return (time.perf_counter() - a) * 1000

    with torch.inference_mode():
        first_ms = run_once()
        cap = args.max_seconds * 1000
        spent = first_ms
        for _ in range(args.warmup):
            # The first run already warmed up a model this slow.
            if cap > 0 and spent >= cap / 2:
                break
            spent += run_once()
        start = time.perf_counter()
        times = []
        while len(times) < args.runs:
            if cap > 0 and len(times) >= args.min_runs and (time.perf_counter() - start) * 1000 >= cap:
                break
            times.append(run_once())
        total_s = time.perf_counter() - start
    times.sort()
    print(json.dumps({
        "model": args.model,
        "providers": f"torch {torch.__version__}",
        "threads": args.threads,
        "batch": 1,
        "runs": len(times),
        "session_create_ms": round(create_ms, 3),
        "first_run_ms": round(first_ms, 3),
        "median_ms": round(percentile(times, 0.5), 3),
        "p90_ms": round(percentile(times, 0.9), 3),
        "p99_ms": round(percentile(times, 0.99), 3),
        "min_ms": round(times[0], 3),
        "throughput_per_s": round(len(times) / total_s if total_s > 0 else 0.0, 3),
        # ru_maxrss is KiB on Linux; includes the construction peak.
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
