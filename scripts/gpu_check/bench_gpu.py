#!/usr/bin/env python3
"""Switchyard's CUDA provider against PyTorch eager on the same GPU.

    bench_gpu.py --switchyard BIN --models-dir DIR --bench-models DIR --out OUT
                 [--rounds 2] [--runs 50] [--dry-run --models mobilenetv2]

Cases: ResNet-50 at batch 1 and 32 and the BERT-like encoder at batch 1 and
8 (sequence 128), each in float32 (TF32 off on both sides) and float16.
Switchyard runs through `switchyard bench --io-binding cuda`: inputs copied
to the GPU once, outputs left there, the stream synchronized at the end of
each run. PyTorch runs the module the ONNX file was exported from
(bench/models), inputs on the GPU, torch.cuda.synchronize() after each run.
The PyTorch side is one worker process (importing torch once); the two sides
alternate case by case over --rounds rounds, and each figure is the median
over rounds of the per-round median. Writes OUT/bench_gpu.json.

--dry-run (no GPU): both sides on the CPU, two runs per case, batch 1, the
models named by --models: it checks the plumbing only.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# (model, batch, goal for Switchyard / PyTorch)
CASES = [("resnet50", 1, 0.5), ("resnet50", 32, 1.0), ("bert", 1, 0.5), ("bert", 8, 1.0)]
SEQUENCE = 128


def torch_worker(bench_models, device):
    """Reads one JSON request per line ({"model", "batch", "dtype", "runs",
    "warmup"}) and answers with one JSON line of times in ms."""
    sys.path.insert(0, bench_models)
    import importlib

    import torch

    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
    modules = {}
    for line in sys.stdin:
        req = json.loads(line)
        key = (req["model"], req["dtype"])
        if key not in modules:
            spec = importlib.import_module(req["model"]).make(small=False, seed=0)
            module = spec.module.eval().to(device)
            if req["dtype"] == "fp16":
                module = module.half()
            modules[key] = module
        module = modules[key]
        batch = req["batch"]
        gen = torch.Generator().manual_seed(0)
        if req["model"] in ("bert",):
            ids = torch.randint(0, 2, (batch, SEQUENCE), generator=gen).to(device)
            args = (ids, torch.ones_like(ids), torch.zeros_like(ids))
        else:
            image = torch.rand((batch, 3, 224, 224), generator=gen) * 2 - 1
            image = image.to(device)
            args = (image.half() if req["dtype"] == "fp16" else image,)

        def once():
            a = time.perf_counter()
            with torch.inference_mode():
                module(*args)
            if device == "cuda":
                torch.cuda.synchronize()
            return (time.perf_counter() - a) * 1000

        for _ in range(req["warmup"]):
            once()
        times = [once() for _ in range(req["runs"])]
        name = torch.cuda.get_device_name(0) if device == "cuda" else "cpu"
        print(json.dumps({"median_ms": statistics.median(times), "torch": torch.__version__, "device": name}),
              flush=True)


def switchyard_bench(args, model, batch, dtype):
    path = os.path.join(args.models_dir, model + (".onnx" if dtype == "fp32" else ".fp16.onnx"))
    cmd = [args.switchyard, "bench", path, "--batch", str(batch), "--runs", str(args.runs),
           "--warmup", str(args.warmup), "--json"]
    if model == "bert":
        cmd += ["--dim", f"sequence={SEQUENCE}"]
    if args.dry_run:
        cmd += ["--providers", "cpu"]
    else:
        cmd += ["--providers", "cuda", "--provider-option", "cuda:use_tf32=0", "--strict", "--io-binding", "cuda"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(" ".join(cmd) + ": " + (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def write_rows(out_dir, rows):
    """OUT/bench_gpu.json after every case, so a run stopped at its time
    limit still leaves what it measured."""
    out = []
    for row in rows.values():
        row = dict(row)
        if row["switchyard"] and row["pytorch"]:
            row["switchyard_ms"] = statistics.median(row["switchyard"])
            row["pytorch_ms"] = statistics.median(row["pytorch"])
            row["ratio"] = row["switchyard_ms"] / row["pytorch_ms"]
        out.append(row)
    with open(os.path.join(out_dir, "bench_gpu.json"), "w") as f:
        json.dump(out, f, indent=1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--worker", choices=["cuda", "cpu"], help=argparse.SUPPRESS)
    p.add_argument("--switchyard")
    p.add_argument("--models-dir")
    p.add_argument("--bench-models", required=True)
    p.add_argument("--out")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--models", default="", help="with --dry-run: the models to time at batch 1")
    args = p.parse_args()
    if args.worker:
        torch_worker(args.bench_models, args.worker)
        return 0

    if args.dry_run:
        cases = [(m, 1, None) for m in args.models.replace(",", " ").split()]
        dtypes = ["fp32"]
        args.rounds, args.runs, args.warmup = 1, 2, 1
    else:
        cases, dtypes = CASES, ["fp32", "fp16"]
    worker = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", "cpu" if args.dry_run else "cuda",
                               "--bench-models", args.bench_models],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    rows = {}
    failed = False
    try:
        for r in range(args.rounds):
            for model, batch, goal in cases:
                for dtype in dtypes:
                    row = rows.setdefault((model, batch, dtype), {"model": model, "batch": batch, "dtype": dtype,
                                                                   "goal": goal, "switchyard": [], "pytorch": []})
                    try:
                        sy = switchyard_bench(args, model, batch, dtype)
                        row["switchyard"].append(sy["median_ms"])
                        row["providers"] = sy["providers"]
                    except (RuntimeError, ValueError, KeyError) as e:
                        row["error"] = str(e)[:300]
                        failed = True
                    worker.stdin.write(json.dumps({"model": model, "batch": batch, "dtype": dtype,
                                                   "runs": args.runs, "warmup": args.warmup}) + "\n")
                    worker.stdin.flush()
                    answer = worker.stdout.readline()
                    if not answer:
                        raise RuntimeError("the PyTorch worker stopped")
                    t = json.loads(answer)
                    row["pytorch"].append(t["median_ms"])
                    row["device"], row["torch"] = t["device"], t["torch"]
                    write_rows(args.out, rows)
                    print(f"round {r + 1}: {model} batch {batch} {dtype}: switchyard "
                          f"{row['switchyard'][-1] if row['switchyard'] else 'error'} ms, pytorch "
                          f"{t['median_ms']:.3f} ms", flush=True)
    finally:
        worker.stdin.close()
        worker.wait(timeout=60)
    write_rows(args.out, rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
