#!/usr/bin/env python3
"""The device check's summary table, from what the phases left in OUT.

    summary.py --out OUT --pack PACK --seconds N [--dry-run 0|1]

Prints the table (the last lines of the device call's output) and writes it
to OUT/summary.md as well.
"""

import argparse
import json
import os
import re


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def load_json(path, default):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def gtest_line(out, name):
    j = load_json(os.path.join(out, name + ".json"), None)
    if j is None:
        tail = read(os.path.join(out, name + ".log")).strip().splitlines()[-1:] or ["no output"]
        return f"no result ({tail[0][:120]})"
    tests = failures = skipped = 0
    failed = []
    for suite in j.get("testsuites", []):
        for t in suite.get("testsuite", []):
            tests += 1
            if t.get("failures"):
                failures += 1
                failed.append(suite["name"] + "." + t["name"])
            elif t.get("result") == "SKIPPED" or t.get("status") == "NOTRUN":
                skipped += 1
    line = f"{tests - failures - skipped} passed, {failures} failed, {skipped} skipped"
    return line + (f" ({', '.join(failed[:5])})" if failed else "")


def node_suite_line(out, name):
    text = read(os.path.join(out, name + ".log"))
    if not text:
        return "not run"
    lines = text.strip().splitlines()
    if lines and lines[0].startswith("skipped:"):
        return lines[0][:160]
    counts = [l for l in lines if re.match(r"^\d+ passed, \d+ failed", l)]
    newly = [l for l in lines if re.match(r"^\d+ newly failing", l)]
    timed_out = any("timed out after" in l for l in lines[-3:])
    line = (counts[-1] if counts else "no summary line") + ("; " + newly[-1] if newly else "")
    return line + ("; TIMED OUT (partial)" if timed_out else "")


def strict_line(out):
    text = read(os.path.join(out, "cuda-cpu-strict.tsv"))
    log = read(os.path.join(out, "node_suite_cuda_strict.log"))
    if not log:
        return "not run"
    counts = [l for l in log.splitlines() if re.match(r"^\d+ passed, \d+ failed", l)]
    fell = other = 0
    for line in text.splitlines():
        if not line or line.startswith("#") or "\t" not in line:
            continue
        reason = line.split("\t", 1)[1]
        if "fell through" in reason or "fallback policy" in reason:
            fell += 1
        else:
            other += 1
    return (counts[-1] if counts else "no summary line") + f" (of the failures: {fell} fall through to the CPU, " \
        f"{other} fail on both; list in cuda-cpu-strict.tsv)"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--pack", required=True)
    p.add_argument("--seconds", type=int, default=0)
    p.add_argument("--dry-run", default="0")
    args = p.parse_args()
    out = args.out
    lines = []
    env = read(os.path.join(out, "environment.log"))
    gpu = next((l for l in env.splitlines() if "," in l and "MiB" in l), "no GPU seen by nvidia-smi")
    commit = next((l.split(":", 1)[1].strip() for l in read(os.path.join(args.pack, "MANIFEST.txt")).splitlines()
                   if l.startswith("commit:")), "?")
    dry = args.dry_run == "1"
    lines.append(f"## GPU check{' (dry run: CUDA parts skipped)' if dry else ''} — commit {commit}, {args.seconds} s")
    lines.append(f"card: {gpu}")
    doctor = read(os.path.join(out, "doctor.log"))
    cuda = next((l.strip() for l in doctor.splitlines() if l.strip().startswith("CUDAExecutionProvider")), "not reported")
    lines.append(f"doctor: {cuda}")
    lines.append("")
    lines.append("| phase | exit | seconds |")
    lines.append("|---|---|---|")
    for row in read(os.path.join(out, "phases.tsv")).splitlines():
        cells = row.split("\t")
        if len(cells) >= 3:
            note = f" ({cells[3]})" if len(cells) > 3 and cells[3] else ""
            lines.append(f"| {cells[0]} | {cells[1]}{note} | {cells[2]} |")
    lines.append("")
    lines.append(f"cuda_host_tests: {gtest_line(out, 'cuda_host_tests')}")
    lines.append(f"gpu_session_tests (IO binding, concurrent runs): {gtest_line(out, 'gpu_session_tests')}")
    lines.append(f"node suite, cuda,cpu against cpu.tsv: {node_suite_line(out, 'node_suite_cuda')}")
    if dry:
        lines.append(f"node suite, packed slice on cpu: {node_suite_line(out, 'node_suite_cpu_slice')}")
    else:
        lines.append(f"node suite, cuda,cpu strict: {strict_line(out)}")
    lines.append("")
    models = load_json(os.path.join(out, "models.json"), [])
    lines.append("| model | dtype | providers | max rel error | limit | result |")
    lines.append("|---|---|---|---|---|---|")
    for r in models:
        err = r.get("max_rel_error")
        result = "ok" if r.get("ok") else "FAIL " + r.get("error", "")
        if r.get("fell_through"):
            result += " (nodes fell through to the CPU)"
        lines.append(f"| {r['model']} | {r['dtype']} | {r.get('providers', '')} | "
                     f"{'-' if err is None else f'{err:.2e}'} | {r['limit']:.0e} | {result} |")
    lines.append("")
    bench = load_json(os.path.join(out, "bench_gpu.json"), [])
    if bench:
        device = next((r.get("device") for r in bench if r.get("device")), "?")
        lines.append(f"Switchyard (IO binding) against PyTorch eager {bench[0].get('torch', '')} on {device}, "
                     "median ms:")
        lines.append("| model | batch | dtype | Switchyard | PyTorch | ratio | goal |")
        lines.append("|---|---|---|---|---|---|---|")
        for r in bench:
            if "ratio" in r:
                goal = r.get("goal")
                verdict = "" if goal is None else (" ok" if r["ratio"] <= goal else " MISSED")
                lines.append(f"| {r['model']} | {r['batch']} | {r['dtype']} | {r['switchyard_ms']:.3f} | "
                             f"{r['pytorch_ms']:.3f} | {r['ratio']:.3f} | "
                             f"{'-' if goal is None else '<= ' + str(goal)}{verdict} |")
            else:
                lines.append(f"| {r['model']} | {r['batch']} | {r['dtype']} | error: {r.get('error', '?')[:80]} | | | |")
        lines.append("")
    scaling = load_json(os.path.join(out, "cpu_scaling.json"), [])
    if scaling:
        ort = next((r.get("onnxruntime") for r in scaling if r.get("onnxruntime")), None)
        lines.append(f"CPU provider against onnxruntime {ort or '(not importable)'}, median ms:")
        lines.append("| model | threads | Switchyard | onnxruntime | ratio |")
        lines.append("|---|---|---|---|---|")
        for r in scaling:
            sy = r.get("switchyard_ms")
            ortms = r.get("onnxruntime_ms")
            lines.append(f"| {r['model']} | {r['threads']} | {'-' if sy is None else f'{sy:.2f}'} | "
                         f"{'-' if ortms is None else f'{ortms:.2f}'} | "
                         f"{r['ratio']:.3f} |" if "ratio" in r else
                         f"| {r['model']} | {r['threads']} | {'-' if sy is None else f'{sy:.2f}'} | "
                         f"{r.get('error', '-')[:60]} | - |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
