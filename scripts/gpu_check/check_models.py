#!/usr/bin/env python3
"""Runs each filled model through `switchyard run` and compares its outputs
with the CPU reference outputs computed when the pack was made.

    check_models.py --switchyard BIN --pack PACK --models-dir DIR --out OUT
                    --providers cuda,cpu [--provider-option cuda:use_tf32=0]
                    [--dtypes fp32,fp16] [--models "resnet50 bert"]

The error of an output is max |got - ref| / max |ref| (a NaN anywhere makes
it infinite), within 1e-4 for float32 and 1e-2 for float16 (whose outputs
are compared with the float32 reference). Float inputs of float16 models are
the reference inputs rounded to float16. Writes OUT/models.json; exits 1
when a model fails to run or misses its limit.
"""

import argparse
import glob
import json
import os
import subprocess
import sys

import numpy as np

LIMITS = {"fp32": 1e-4, "fp16": 1e-2}


def rel_error(got, ref):
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        return float("inf")
    if got.size == 0:
        return 0.0
    diff = np.abs(got - ref)
    if np.isnan(diff).any():
        return float("inf")
    return float(diff.max() / max(float(np.abs(ref).max()), 1e-30))


def check(args, model, dtype):
    row = {"model": model, "dtype": dtype, "limit": LIMITS[dtype], "providers": args.providers}
    path = os.path.join(args.models_dir, model + (".onnx" if dtype == "fp32" else ".fp16.onnx"))
    if not os.path.exists(path):
        row.update(ok=False, error=f"{path} is missing")
        return row
    input_dir = os.path.join(args.pack, "models", model + ".inputs")
    if dtype == "fp16":
        half_dir = os.path.join(args.out, "inputs-fp16", model)
        os.makedirs(half_dir, exist_ok=True)
        for f in glob.glob(os.path.join(input_dir, "*.npy")):
            a = np.load(f)
            np.save(os.path.join(half_dir, os.path.basename(f)), a.astype(np.float16) if a.dtype == np.float32 else a)
        input_dir = half_dir
    out_dir = os.path.join(args.out, "outputs", f"{model}.{dtype}")
    os.makedirs(out_dir, exist_ok=True)
    cmd = [args.switchyard, "run", path, "--providers", args.providers, "--fallback", "warn",
           "--save-outputs", out_dir]
    for item in args.provider_option:
        cmd += ["--provider-option", item]
    for f in sorted(glob.glob(os.path.join(input_dir, "*.npy"))):
        cmd += ["--input", os.path.splitext(os.path.basename(f))[0] + "=" + f]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    log = os.path.join(args.out, "outputs", f"{model}.{dtype}.log")
    with open(log, "w") as f:
        f.write(" ".join(cmd) + "\n" + proc.stdout + proc.stderr)
    row["fell_through"] = "fell through" in proc.stderr
    row["placement"] = next((line for line in proc.stdout.splitlines() if line.startswith("providers:")), "")
    if proc.returncode != 0:
        row.update(ok=False, error=(proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1][:300])
        return row
    worst = 0.0
    refs = sorted(glob.glob(os.path.join(args.pack, "models", model + ".ref", "*.npy")))
    if not refs:
        row.update(ok=False, error="no reference outputs packed")
        return row
    for ref_path in refs:
        name = os.path.basename(ref_path)
        got_path = os.path.join(out_dir, name)
        if not os.path.exists(got_path):
            row.update(ok=False, error=f"no output {name}")
            return row
        worst = max(worst, rel_error(np.load(got_path), np.load(ref_path)))
    row.update(ok=worst <= LIMITS[dtype], max_rel_error=worst)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--switchyard", required=True)
    p.add_argument("--pack", required=True)
    p.add_argument("--models-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--providers", default="cuda,cpu")
    p.add_argument("--provider-option", action="append", default=[])
    p.add_argument("--dtypes", default="fp32,fp16")
    p.add_argument("--models", required=True, help="space- or comma-separated model names")
    args = p.parse_args()
    rows = []
    for model in args.models.replace(",", " ").split():
        for dtype in args.dtypes.split(","):
            row = check(args, model, dtype)
            rows.append(row)
            err = row.get("max_rel_error")
            print(f"{model:12s} {dtype}  {'ok  ' if row['ok'] else 'FAIL'}  "
                  f"max rel error {err if err is None else f'{err:.2e}'} (limit {row['limit']:.0e})"
                  f"{'  fell through' if row.get('fell_through') else ''}  {row.get('error', '')}", flush=True)
    with open(os.path.join(args.out, "models.json"), "w") as f:
        json.dump(rows, f, indent=1)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
