#!/usr/bin/env python3
"""The CPU provider against onnxruntime's CPU provider at several thread
counts, on the packed models and inputs (the GPU machine has 16 cores, where
every other CPU figure of this project comes from 2).

    cpu_scaling.py --switchyard BIN --models-dir DIR --out OUT
                   [--threads 1,4,8,16] [--runs 10] [--models "resnet50 bert"]

Per model and thread count, Switchyard (`switchyard bench --json`) and then
onnxruntime (its Python module, sequential execution, the same thread count,
graph optimizations on) time the same file on the same inputs; the figure is
each side's median. Where onnxruntime cannot be imported only Switchyard's
times are recorded. Writes OUT/cpu_scaling.json.
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np


def inputs_of(pack_models, model):
    files = sorted(glob.glob(os.path.join(pack_models, model + ".inputs", "*.npy")))
    return {os.path.splitext(os.path.basename(f))[0]: f for f in files}


def switchyard_ms(args, path, files, threads):
    cmd = [args.switchyard, "bench", path, "--providers", "cpu", "--threads", str(threads), "--runs", str(args.runs),
           "--warmup", "2", "--json"]
    for name, f in files.items():
        cmd += ["--input", f"{name}={f}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError((proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1])
    return json.loads(proc.stdout.strip().splitlines()[-1])["median_ms"]


def ort_ms(ort, path, files, threads, runs):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    feeds = {name: np.load(f) for name, f in files.items()}
    for _ in range(2):
        session.run(None, feeds)
    times = []
    for _ in range(runs):
        a = time.perf_counter()
        session.run(None, feeds)
        times.append((time.perf_counter() - a) * 1000)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--switchyard", required=True)
    p.add_argument("--models-dir", required=True)
    p.add_argument("--inputs", default=None, help="folder holding <model>.inputs/ (default: the pack's models/)")
    p.add_argument("--out", required=True)
    p.add_argument("--threads", default="1,4,8,16")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--models", required=True)
    args = p.parse_args()
    pack_models = args.inputs or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models")
    try:
        import onnxruntime as ort
        ort_version = ort.__version__
    except ImportError:
        ort, ort_version = None, None
        print("cpu_scaling: onnxruntime cannot be imported here; timing Switchyard only")
    rows = []
    for model in args.models.replace(",", " ").split():
        path = os.path.join(args.models_dir, model + ".onnx")
        files = inputs_of(pack_models, model)
        for threads in [int(t) for t in args.threads.split(",")]:
            row = {"model": model, "threads": threads, "onnxruntime": ort_version}
            try:
                row["switchyard_ms"] = switchyard_ms(args, path, files, threads)
                if ort is not None:
                    row["onnxruntime_ms"] = ort_ms(ort, path, files, threads, args.runs)
                    row["ratio"] = row["switchyard_ms"] / row["onnxruntime_ms"]
            except Exception as e:  # noqa: BLE001 -- one row's failure is reported, the rest still run
                row["error"] = str(e)[:300]
            rows.append(row)
            print(json.dumps(row), flush=True)
            # After every row: a run stopped at its time limit keeps what it measured.
            with open(os.path.join(args.out, "cpu_scaling.json"), "w") as f:
                json.dump(rows, f, indent=1)
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
