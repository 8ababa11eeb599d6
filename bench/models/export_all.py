#!/usr/bin/env python3
"""Exports the benchmark/test models to ONNX (opset 17) with reference data.

    /usr/bin/python3 bench/models/export_all.py --out DIR [--models resnet50,bert] [--small]

For each model writes DIR/<model>.onnx, DIR/<model>.inputs/<input>.npy and
DIR/<model>.expected/<output>.npy (PyTorch's outputs for those inputs), then
prints each model's op histogram. Weights are random with a fixed seed, so
the same torch version exports the same files.
"""

import argparse
import importlib
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

MODELS = ["resnet50", "mobilenetv2", "bert", "gpt2", "lstm", "vad", "textdet", "tree_ensemble"]
# Models also written in float16 (to_fp16.py) as <model>_fp16, with their
# float inputs in float16 and the float32 model's outputs as the reference.
FP16_MODELS = ["resnet50", "bert"]


def write_fp16(out: str, name: str) -> str:
    """DIR/<name>_fp16.onnx from DIR/<name>.onnx, with the inputs in float16
    and the float32 outputs as the expected ones."""
    import shutil

    import numpy as np
    import onnx

    import to_fp16

    path = os.path.join(out, name + "_fp16.onnx")
    model = to_fp16.convert(onnx.load(os.path.join(out, name + ".onnx")))
    onnx.save(model, path)
    for kind in ("inputs", "expected"):
        src = os.path.join(out, f"{name}.{kind}")
        dst = os.path.join(out, f"{name}_fp16.{kind}")
        shutil.rmtree(dst, ignore_errors=True)
        os.makedirs(dst)
        for f in sorted(os.listdir(src)):
            array = np.load(os.path.join(src, f))
            if kind == "inputs" and array.dtype == np.float32:
                array = array.astype(np.float16)
            np.save(os.path.join(dst, f), array)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(HERE, "out"), help="output folder (default: %(default)s)")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of " + ",".join(MODELS))
    parser.add_argument("--small", action="store_true",
                        help="reduced sizes (2 layers, hidden 128, vocab 1000, small images) for fast tests")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(MODELS)}")

    import torch  # after argument parsing so that --help needs no torch

    import common

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    summaries = []
    for name in names:
        start = time.perf_counter()
        module = importlib.import_module(name)
        if hasattr(module, "write"):  # not a PyTorch model: it writes its own files
            summary = module.write(args.out, small=args.small, seed=args.seed)
            summary["export_seconds"] = time.perf_counter() - start
        else:
            summary = common.export(module.make(small=args.small, seed=args.seed), args.out)
        summary["total_seconds"] = time.perf_counter() - start
        summaries.append(summary)
        print(f"{name}: {summary['path']} ({summary['bytes'] / 1e6:.1f} MB), export {summary['export_seconds']:.1f} s,"
              f" total {summary['total_seconds']:.1f} s", flush=True)
        if name in FP16_MODELS:
            print(f"{name}_fp16: {write_fp16(args.out, name)}", flush=True)

    print()
    for s in summaries:
        total = sum(s["ops"].values())
        print(f"{s['name']}: {total} nodes, opset {common.OPSET}")
        for op, count in sorted(s["ops"].items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {op:24s} {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
