#!/usr/bin/python3
"""Benchmarks the same ONNX models, on the same inputs and thread counts,
through Switchyard (`switchyard bench --json`), ONNX Runtime (Node.js
binding, bench/ort_bench.mjs) and PyTorch (bench/torch_bench.py, the model
definitions the ONNX files were exported from).

    bench/compare [--models resnet50,mobilenetv2,bert,gpt2] [--threads 1,2]
                  [--runs 10] [--rounds 2] [--tools switchyard,switchyard-cuda-cpu,ort,torch]

Runs are interleaved: for each model and thread count, one process per tool
in turn, and that round is repeated --rounds times; each tool's reported
median is the median of its per-round medians, so drift (other load, thermal
state) hits all tools alike. Writes OUT/compare.md, OUT/compare.csv and
OUT/compare_raw.json (every per-process result); OUT/compare.png too when
matplotlib is importable.
"""

import argparse
import csv
import json
import os
import shutil
import statistics
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ORT_VERSION = "1.30.0"
NODE_DIR = os.path.join(HERE, ".node")
# "switchyard-cuda-cpu" is Switchyard asked for --providers cuda,cpu: where
# CUDA cannot load (this CPU-only machine) every node falls through to the
# CPU, which must then run as fast as --providers cpu (the ratio column
# says so), with the CPU's own fusions and layouts.
TOOLS = ["switchyard", "switchyard-cuda-cpu", "ort", "torch"]
TOOL_TITLES = {"switchyard": "Switchyard", "switchyard-cuda-cpu": "Switchyard cuda,cpu", "ort": "ORT",
               "torch": "PyTorch"}
MODELS = ["resnet50", "mobilenetv2", "bert", "gpt2", "lstm", "vad", "textdet", "tree_ensemble", "resnet50_fp16",
          "bert_fp16", "resnet50_int8", "bert_int8"]
# The reduced-precision models (bench/models/to_fp16.py and
# quantize_models.py): their accuracy against float32
# (bench/models/accuracy.py) and whether the two runtimes agree on them go
# beside their timings. PyTorch does not time them: they exist only as ONNX
# files (and PyTorch's CPU float16 is not what a user would run).
REDUCED_PRECISION = ["resnet50_fp16", "bert_fp16", "resnet50_int8", "bert_int8"]
# The tree ensemble is scikit-learn's, written as ai.onnx.ml: no PyTorch form.
NOT_TORCH = set(REDUCED_PRECISION) | {"tree_ensemble"}
# Latency-bound models (a fraction of a millisecond per call) need many runs
# per process for a stable median: at least this many timed and warm-up
# runs, whatever --runs and --warmup say.
MIN_RUNS = {"vad": (3000, 200)}
# Models whose time is mostly Conv/MatMul, for which GFLOP/s against the
# measured FMA peak says how close to the hardware a runtime gets.
FLOP_MODELS = ["resnet50", "mobilenetv2", "bert", "gpt2"]
# Op types that carry the Conv/MatMul/Gemm work of bench/flops.py after
# each runtime's fusions (ORT's NCHWc Conv reports itself as "Conv"; a
# fused Attention node also holds its softmax, which only lowers its rate).
MATRIX_OPS = {"Conv", "FusedConv", "ConvTranspose", "MatMul", "FusedMatMul", "Gemm", "FusedGemm", "Attention",
              "MultiHeadAttention"}
# Tools whose bench command takes --profile PREFIX and reports op_ms.
PROFILED_TOOLS = ["switchyard", "ort"]
# Debian packages the comparison needs beyond the build's: the chart, and an
# optimised BLAS so that PyTorch is not measured on the netlib reference one.
APT_PACKAGES = {"python3-matplotlib": "/usr/lib/python3/dist-packages/matplotlib",
                "libopenblas0-pthread": "/usr/lib/x86_64-linux-gnu/openblas-pthread"}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def ensure_ort(version: str) -> None:
    pkg = os.path.join(NODE_DIR, "node_modules", "onnxruntime-node", "package.json")
    if os.path.exists(pkg):
        with open(pkg) as f:
            if json.load(f).get("version") == version:
                return
    if not shutil.which("npm") or not shutil.which("node"):
        raise SystemExit("error: node and npm are needed for the ONNX Runtime column (or pass --tools without ort)")
    log(f"installing onnxruntime-node@{version} into {NODE_DIR}")
    os.makedirs(NODE_DIR, exist_ok=True)
    # --ignore-scripts: the postinstall step only fetches GPU binaries; the
    # CPU library ships inside the package.
    subprocess.run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", NODE_DIR,
                    f"onnxruntime-node@{version}"], check=True)


def ensure_apt_packages() -> None:
    missing = [p for p, path in APT_PACKAGES.items() if not os.path.exists(path)]
    if not missing:
        return
    log(f"installing {' '.join(missing)} with apt-get")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    ok = subprocess.run(sudo + ["apt-get", "update", "-qq"], env=env).returncode == 0
    ok = ok and subprocess.run(sudo + ["apt-get", "install", "-y", "-qq"] + missing, env=env).returncode == 0
    if not ok:
        log(f"warning: could not install {missing}; the chart or the PyTorch BLAS may be missing")


def built_tool(name: str) -> str:
    """bench/<name>.cc built into bench/.build/<name> when missing or older than its source."""
    exe = os.path.join(HERE, ".build", name)
    src = os.path.join(HERE, name + ".cc")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        os.makedirs(os.path.dirname(exe), exist_ok=True)
        subprocess.run(["g++", "-O3", "-std=c++17", "-pthread", src, "-o", exe], check=True)
    return exe


def fma_peak(max_threads: int) -> dict:
    """Runs bench/fma_peak.cc: GFLOP/s of a pure FMA loop per thread count."""
    p = subprocess.run([built_tool("fma_peak"), str(max_threads)], capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def core_round_trip() -> float:
    """Runs bench/core_round_trip.cc: ns for a cache line between CPUs 0 and 1, or None."""
    p = subprocess.run([built_tool("core_round_trip")], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])["round_trip_ns"]


def input_args(models_dir: str, model: str):
    folder = os.path.join(models_dir, model + ".inputs")
    args = []
    for f in sorted(os.listdir(folder)):
        if f.endswith(".npy"):
            args += ["--input", f"{f[:-4]}={os.path.join(folder, f)}"]
    return args


def command(tool: str, model: str, threads: int, a, profile: str = None) -> list:
    onnx = os.path.join(a.models_dir, model + ".onnx")
    inputs = input_args(a.models_dir, model)
    runs, warmup = a.runs, a.warmup
    if profile is None and model in MIN_RUNS:
        runs, warmup = max(runs, MIN_RUNS[model][0]), max(warmup, MIN_RUNS[model][1])
    common = ["--threads", str(threads), "--runs", str(runs), "--warmup", str(warmup)]
    if profile is not None:
        common += ["--profile", profile]
    if tool == "switchyard":
        return [a.switchyard, "bench", onnx, "--json"] + common + inputs
    if tool == "switchyard-cuda-cpu":
        return [a.switchyard, "bench", onnx, "--json", "--providers", "cuda,cpu"] + common + inputs
    if tool == "ort":
        return ["node", os.path.join(HERE, "ort_bench.mjs"), onnx] + common + inputs
    return ["/usr/bin/python3", os.path.join(HERE, "torch_bench.py"), model, "--max-seconds",
            str(a.torch_max_seconds)] + common + inputs


def run_one(tool: str, model: str, threads: int, a, profile: str = None) -> dict:
    cmd = command(tool, model, threads, a, profile)
    # OpenBLAS (PyTorch's BLAS here) starts a thread per core unless told;
    # held to the same count as everyone else, or its "1 thread" uses two.
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {a.timeout} s"}
    wall = time.perf_counter() - start
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"error": f"exit {p.returncode}: {tail}"}
    result = json.loads(lines[-1])
    result["process_wall_s"] = round(wall, 2)
    if profile is not None:
        # Only the per-op sums are kept; the traces would fill the disk.
        if result.get("profile_file") and os.path.exists(result["profile_file"]):
            os.remove(result["profile_file"])
        op_ms = result.get("op_ms", {})
        # Each run's own sums, and their medians: the statistic the latency
        # figures use, where one slow run (a busy moment of the host) would
        # move the mean over runs that op_ms is.
        per_run = result.get("run_op_ms") or [op_ms]
        matrix_runs = [sum(v for k, v in run.items() if k in MATRIX_OPS) for run in per_run]
        total_runs = [sum(run.values()) for run in per_run]
        return {"matrix_ms": median(matrix_runs), "profiled_ms": median(total_runs),
                "matrix_ms_mean": sum(v for k, v in op_ms.items() if k in MATRIX_OPS),
                "profiled_ms_mean": sum(op_ms.values()), "matrix_ms_runs": matrix_runs, "op_ms": op_ms}
    return result


def agreement(model: str, a) -> dict:
    """Runs the model once in each runtime on its bench input and compares
    the outputs: the largest |Switchyard - ORT| per output beside the
    largest |ORT|, and for a [1, 1000] output whether the top-1 classes match."""
    onnx = os.path.join(a.models_dir, model + ".onnx")
    inputs = input_args(a.models_dir, model)
    with tempfile.TemporaryDirectory() as tmp:
        ort_json = os.path.join(tmp, "ort.json")
        runs = [[a.switchyard, "run", onnx, "--save-outputs", os.path.join(tmp, "sy")] + inputs,
                ["node", os.path.join(HERE, "ort_bench.mjs"), onnx, "--runs", "1", "--warmup", "0",
                 "--outputs", ort_json] + inputs]
        for cmd in runs:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
            if p.returncode != 0:
                return {"error": f"{os.path.basename(cmd[0])}: " + (p.stderr.strip().splitlines() or ["?"])[-1]}
        with open(ort_json) as f:
            ort = json.load(f)
        out = {}
        for name, t in ort.items():
            # switchyard run's file name for the output (tools/cmd_run.cc).
            file = re.sub(r"[^A-Za-z0-9_.-]", "_", name or "_")
            file = "_" + file[1:] if file.startswith(".") else file
            mine = np.load(os.path.join(tmp, "sy", file + ".npy")).astype(np.float64)
            theirs = np.asarray(t["data"], dtype=np.float64).reshape(t["dims"])
            if mine.shape != theirs.shape:
                out[name] = {"error": f"shapes {list(mine.shape)} and {list(theirs.shape)}"}
                continue
            r = {"max_abs_diff": float(np.max(np.abs(mine - theirs))), "max_abs": float(np.max(np.abs(theirs)))}
            if theirs.ndim == 2 and theirs.shape[1] == 1000:
                r["top1_same"] = bool(np.all(np.argmax(mine, axis=1) == np.argmax(theirs, axis=1)))
            out[name] = r
        return out


def read_accuracy(model: str, a):
    path = os.path.join(a.models_dir, model + ".accuracy.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def matrix_product_ms(rounds: list):
    """Median over the profiled rounds of each round's median run: the time
    in the nodes that do the Conv/MatMul/Gemm work, and in all nodes."""
    ok = [r for r in rounds if "matrix_ms" in r]
    if not ok:
        return None, None
    return median([r["matrix_ms"] for r in ok]), median([r["profiled_ms"] for r in ok])


def median(xs):
    return statistics.median(xs) if xs else None


def aggregate(rounds: list) -> dict:
    ok = [r for r in rounds if "error" not in r]
    if not ok:
        return {"error": rounds[-1]["error"] if rounds else "not run"}
    return {
        "rounds": len(ok),
        "runs": sum(r["runs"] for r in ok),
        "median_ms": median([r["median_ms"] for r in ok]),
        "p90_ms": median([r["p90_ms"] for r in ok]),
        "min_ms": min(r["min_ms"] for r in ok),
        "first_run_ms": median([r["first_run_ms"] for r in ok]),
        "session_create_ms": median([r["session_create_ms"] for r in ok]),
        "peak_rss_mib": max(r["peak_rss_mib"] for r in ok),
        "errors": len(rounds) - len(ok),
    }


def fmt(x, digits=1):
    return "—" if x is None else f"{x:.{digits}f}"


def fmt_ms(x):
    """A time in ms with three significant digits at least down to 0.001 ms,
    so that sub-millisecond models (vad) do not read as 0.1 against 0.1."""
    if x is None:
        return "—"
    return fmt(x, 1 if x >= 10 else 2 if x >= 1 else 3)


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def paired_ratio(table: dict, m: str, t: int, tool: str, peer: str):
    """Median over rounds of tool's median / peer's median in the same
    round. The two ran back to back, so a round that the machine's other
    tenants slowed counts once, as a ratio, where the medians of medians
    above can each take their middle value from a different round."""
    pairs = zip(table.get((m, t, tool), []), table.get((m, t, peer), []))
    return median([x["median_ms"] / y["median_ms"] for x, y in pairs
                   if "error" not in x and "error" not in y and y["median_ms"] > 0])


def write_outputs(out: str, table: dict, a, env: dict, chart: bool) -> None:
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "compare_raw.json"), "w") as f:
        json.dump({"env": env, "results": [
            {"model": m, "threads": t, "tool": tool, "rounds": rs} for (m, t, tool), rs in table.items()]}, f, indent=1)

    agg = {k: aggregate(v) for k, v in table.items()}
    keys = sorted({(m, t) for (m, t, _) in table}, key=lambda k: (a.models.index(k[0]), k[1]))

    with open(os.path.join(out, "compare.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "threads", "tool", "rounds", "timed_runs", "median_ms", "p90_ms", "min_ms",
                    "first_run_ms", "session_create_ms", "peak_rss_mib", "error"])
        for m, t in keys:
            for tool in a.tools:
                g = agg.get((m, t, tool), {"error": "not run"})
                w.writerow([m, t, tool, g.get("rounds", 0), g.get("runs", 0)] +
                           [round(g[c], 3) if c in g else "" for c in ("median_ms", "p90_ms", "min_ms", "first_run_ms",
                                                    "session_create_ms", "peak_rss_mib")] + [g.get("error", "")])

    def med(m, t, tool):
        return agg.get((m, t, tool), {}).get("median_ms")

    lines = ["# Switchyard vs ONNX Runtime vs PyTorch", "",
             f"{env['date']}, {env['cpu']}, {env['cores']} cores. "
             f"{a.rounds} interleaved round(s) of {a.runs} timed runs (+{a.warmup} warm-up) per tool"
             + "".join(f", {m} at least {r} (+{w})" for m, (r, w) in MIN_RUNS.items() if m in a.models) + "; "
             "each cell is the median of the per-round medians, in ms (lower is better). "
             "Ratios below 1 mean Switchyard is faster. 'per round' is the median over rounds of "
             "Switchyard's median over ORT's in the same round, the two run back to back "
             "(paired_ratio in bench/compare.py).", ""]
    head = ["model", "threads"] + [f"{TOOL_TITLES[t]} ms" for t in a.tools]
    if "ort" in a.tools:
        head += ["Switchyard/ORT", "Switchyard/ORT per round"]
    if "torch" in a.tools:
        head.append("Switchyard/PyTorch")
    if "switchyard-cuda-cpu" in a.tools and "switchyard" in a.tools:
        head.append("cuda,cpu / cpu per round")
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m, t in keys:
        row = [m, str(t)] + [fmt_ms(med(m, t, tool)) for tool in a.tools]
        if "ort" in a.tools:
            row.append(fmt(ratio(med(m, t, "switchyard"), med(m, t, "ort")), 2))
            row.append(fmt(paired_ratio(table, m, t, "switchyard", "ort"), 2))
        if "torch" in a.tools:
            row.append(fmt(ratio(med(m, t, "switchyard"), med(m, t, "torch")), 3))
        if "switchyard-cuda-cpu" in a.tools and "switchyard" in a.tools:
            row.append(fmt(paired_ratio(table, m, t, "switchyard-cuda-cpu", "switchyard"), 2))
        lines.append("| " + " | ".join(row) + " |")

    reduced = [m for m in a.models if m in REDUCED_PRECISION]
    if reduced:
        lines += ["", "## Reduced precision: accuracy and agreement", "",
                  "Accuracy against the float32 model the file was made from, through Switchyard "
                  "(bench/models/accuracy.py: top-1 agreement over fixed random images for ResNet-50, the largest "
                  "|difference| of pooler_output over fixed random token sequences for BERT). Agreement: the "
                  "same bench input through both runtimes, the largest |Switchyard - ORT| of each output beside "
                  "the largest |ORT output|.", "",
                  "| model | accuracy against float32 | Switchyard vs ORT |", "|---|---|---|"]
        for m in reduced:
            acc = env.get("accuracy", {}).get(m)
            acc_text = "not measured (bench/models/accuracy.py)" if not acc else (
                f"{acc['value']:.2f} {acc['metric']} ({acc['samples']} samples)" if "top-1" in acc["metric"] else
                f"{acc['value']:.3g} {acc['metric']} (largest float32 value {acc.get('float32_max_abs', 0):.3g}, "
                f"{acc['samples']} samples)")
            agr = env.get("agreement", {}).get(m)
            if agr is None:
                agr_text = "not run"
            elif "error" in agr:
                agr_text = agr["error"]
            else:
                agr_text = "; ".join(
                    f"{name}: {r['error']}" if "error" in r else
                    f"{name}: {r['max_abs_diff']:.3g} of {r['max_abs']:.3g}" +
                    (f", top-1 {'same' if r['top1_same'] else 'differs'}" if "top1_same" in r else "")
                    for name, r in agr.items())
            lines.append(f"| {m} | {acc_text} | {agr_text} |")

    if env.get("flops"):
        peak = env.get("fma_peak", {})
        lines += ["", "## Achieved GFLOP/s against the measured FMA peak", "",
                  f"Peak: a pure FMA loop ({peak.get('isa', '?')}), the best of "
                  f"{len(env.get('fma_peak_measurements', [peak]))} measurements in this run: " +
                  ", ".join(f"{k.split('_')[1]} thread(s) {v:.1f} GFLOP/s" for k, v in peak.items()
                            if k.startswith("gflops_")) +
                  ". Work: 2 FLOPs per multiply-add of the Conv, MatMul and Gemm nodes (bench/flops.py).", "",
                  "| model | threads | GFLOP per run | " + " | ".join(f"{TOOL_TITLES[t]} GFLOP/s (% of peak)"
                                                              for t in a.tools) + " |",
                  "|" + "---|" * (3 + len(a.tools))]

        def rate_cell(gflop, ms, peak_t):
            if not ms:
                return "—"
            rate = gflop / (ms / 1000.0)
            return f"{rate:.1f} ({100.0 * rate / peak_t:.0f} %)" if peak_t else f"{rate:.1f}"

        def flop_rows(cells):
            """A row per model with a FLOP count and thread count: cells(m, t, gflop, peak) -> its cells."""
            for m, t in keys:
                if m in env["flops"]:
                    gflop = env["flops"][m] / 1e9
                    cols = cells(m, t, gflop, peak.get(f"gflops_{t}"))
                    lines.append(f"| {m} | {t} | " + " | ".join(cols) + " |")

        flop_rows(lambda m, t, gflop, peak_t: [f"{gflop:.2f}"] +
                  [rate_cell(gflop, med(m, t, tool), peak_t) for tool in a.tools])
        profiled = [tool for tool in a.tools if tool in PROFILED_TOOLS]
        if env.get("profiles") and profiled:
            lines += ["", "### The matrix products alone", "",
                      "The same work over the time spent in the nodes that do it (op types "
                      f"{', '.join(sorted(MATRIX_OPS))}), from separate profiled runs of each tool in every round "
                      "(each runtime's own per-node profiler; the timed runs above are not profiled), "
                      "as many runs as the timed ones; the median run of each round, then the median "
                      "over rounds, as for the latencies. Fused "
                      "epilogues (bias, activation, residual, Switchyard's GELU) and a fused Attention's softmax "
                      "count as matrix-product time. 'share' is that time over the time in all nodes.", "",
                      "| model | threads | " + " | ".join(f"{TOOL_TITLES[t]} GFLOP/s (% of peak), share"
                                                         for t in profiled) + " |",
                      "|" + "---|" * (2 + len(profiled))]

            def matrix_cell(m, t, tool, gflop, peak_t):
                mm, total = matrix_product_ms(env["profiles"].get(f"{m}/{t}/{tool}", []))
                return "—" if not mm else f"{rate_cell(gflop, mm, peak_t)}, {100.0 * mm / total:.0f} %"

            flop_rows(lambda m, t, gflop, peak_t: [matrix_cell(m, t, tool, gflop, peak_t) for tool in profiled])

    lines += ["", "## Session creation, first run, peak memory", "",
              "| model | threads | tool | create ms | first run ms | p90 ms | min ms | peak RSS MiB | timed runs |",
              "|---|---|---|---|---|---|---|---|---|"]
    for m, t in keys:
        for tool in a.tools:
            g = agg.get((m, t, tool), {"error": "not run"})
            if "error" in g:
                lines.append(f"| {m} | {t} | {TOOL_TITLES[tool]} | error: {g['error']} | | | | | |")
                continue
            lines.append(f"| {m} | {t} | {TOOL_TITLES[tool]} | {fmt(g['session_create_ms'])} | "
                         f"{fmt_ms(g['first_run_ms'])} | {fmt_ms(g['p90_ms'])} | {fmt_ms(g['min_ms'])} | "
                         f"{fmt(g['peak_rss_mib'])} | {g['runs']} |")
    lines += ["", "Notes:", "",
              f"- Switchyard: `{os.path.relpath(a.switchyard, ROOT)} bench --json`, default session options; "
              "'Switchyard cuda,cpu' adds `--providers cuda,cpu` (on a machine without a usable GPU every node "
              "falls through to the CPU, and 'cuda,cpu / cpu' should be 1).",
              f"- ORT: onnxruntime-node {env.get('ort_version', '?')} (CPU EP, graph optimisation `all`, "
              "sequential execution, interOpNumThreads 1); times include the Node.js async `run` overhead.",
              f"- PyTorch: {env.get('torch', '?')}, eager, `inference_mode`, set_num_threads(N), interop 1; "
              "'create' is building the module with random weights (for the CNNs also BatchNorm calibration), "
              "not loading a file. Runs are capped at "
              f"{a.torch_max_seconds:g} s per process (at least 2 timed runs), so slow models have fewer runs.",
              f"- PyTorch BLAS: {env.get('torch_blas', '?')}.",
              "- Peak RSS is per process (Node.js and Python interpreters included), the max over rounds.", ""]
    trips = [(m, t, tool, [r.get("core_round_trip_ns") for r in rs]) for (m, t, tool), rs in table.items() if t > 1]
    if any(x is not None for *_, xs in trips for x in xs):
        lines += ["## Core-to-core round trip of each multi-thread run", "",
                  "A cache line between CPUs 0 and 1 (bench/core_round_trip.cc), measured just before each run, "
                  "in ns, round by round. About 55 ns: the two vCPUs share an L3. Several hundred: the machine "
                  "had them on different core complexes, where every runtime's 2-thread runs are slower "
                  "(bench/README.md).", "",
                  "| model | threads | tool | round trip ns per round |", "|---|---|---|---|"]
        for m, t, tool, xs in trips:
            lines.append(f"| {m} | {t} | {TOOL_TITLES[tool]} | " + ", ".join("—" if x is None else f"{x:.0f}" for x in xs)
                         + " |")
        lines.append("")
    for (m, t, tool), rs in table.items():
        for r in rs:
            if "error" in r:
                lines.append(f"- {TOOL_TITLES[tool]} failed on {m} ({t} threads): {r['error']}")
    with open(os.path.join(out, "compare.md"), "w") as f:
        f.write("\n".join(lines) + "\n")

    if not chart:
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib is not available for /usr/bin/python3: no chart written")
        return
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(keys)), 4))
    width = 0.8 / len(a.tools)
    for i, tool in enumerate(a.tools):
        ys = [med(m, t, tool) or 0 for m, t in keys]
        ax.bar([k + i * width for k in range(len(keys))], ys, width, label=TOOL_TITLES[tool])
    ax.set_xticks([k + width * (len(a.tools) - 1) / 2 for k in range(len(keys))])
    ax.set_xticklabels([f"{m}\n{t} thr" for m, t in keys])
    ax.set_ylabel("median latency, ms (log)")
    ax.set_yscale("log")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "compare.png"), dpi=120)


def environment(a) -> dict:
    env = {"date": time.strftime("%Y-%m-%d %H:%M"), "cores": os.cpu_count(), "cpu": "unknown CPU"}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    env["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    if "ort" in a.tools:
        with open(os.path.join(NODE_DIR, "node_modules", "onnxruntime-node", "package.json")) as f:
            env["ort_version"] = json.load(f)["version"]
    if "torch" in a.tools:
        p = subprocess.run(["/usr/bin/python3", "-c",
                            "import torch,re; c=torch.__config__.show(); m=re.search(r'BLAS_INFO=(\\w+)', c); "
                            "print(torch.__version__); print(m.group(1) if m else '?')"],
                           capture_output=True, text=True)
        out = p.stdout.split()
        if len(out) >= 2:
            env["torch"] = "torch " + out[0]
            blas = out[1]
            real = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
            env["torch_blas"] = f"BLAS_INFO={blas}, libblas.so.3 -> {real}" + (
                " (the netlib reference BLAS: unoptimised, single-threaded, so PyTorch's Linear/MatMul are very "
                "slow here; this measures the installed Debian stack, not PyTorch at its best)"
                if "/blas/libblas.so" in real else "")
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=10, help="timed runs per process (default: %(default)s)")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up runs after the first (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds (default: %(default)s)")
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--models-dir", default=os.path.join(ROOT, "build", "models"))
    parser.add_argument("--switchyard", default=os.path.join(ROOT, "build", "switchyard"))
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    parser.add_argument("--torch-max-seconds", type=float, default=10.0,
                        help="cap on PyTorch's timed loop per process (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=300.0, help="per-process timeout, s (default: %(default)s)")
    parser.add_argument("--ort-version", default=ORT_VERSION)
    parser.add_argument("--no-profile", action="store_true",
                        help="skip the profiled runs that time the matrix products alone")
    parser.add_argument("--no-install", action="store_true",
                        help="do not apt-get install matplotlib and OpenBLAS when they are missing")
    a = parser.parse_args()
    a.models = [m.strip() for m in a.models.split(",") if m.strip()]
    a.tools = [t.strip() for t in a.tools.split(",") if t.strip()]
    threads = [int(t) for t in a.threads.split(",") if t.strip()]
    bad = [t for t in a.tools if t not in TOOLS]
    if bad:
        parser.error(f"unknown tool(s) {bad}; choose from {TOOLS}")
    for m in a.models:
        if not os.path.exists(os.path.join(a.models_dir, m + ".onnx")):
            parser.error(f"{a.models_dir}/{m}.onnx not found: export it with "
                         f"/usr/bin/python3 bench/models/export_all.py --out {a.models_dir}")
    if any(t.startswith("switchyard") for t in a.tools) and not os.access(a.switchyard, os.X_OK):
        parser.error(f"{a.switchyard} not found: build it (ninja -C build switchyard) or pass --switchyard")
    if "ort" in a.tools:
        ensure_ort(a.ort_version)
    if not a.no_install:
        ensure_apt_packages()

    env = environment(a)
    # The peak is the hardware's, so the best of several measurements: one
    # now and one after each model. On a shared machine a single one can
    # catch a busy moment (a 2-thread peak of 156 instead of 231 GFLOP/s
    # once), which would inflate every percentage of it.
    peaks = [fma_peak(max(threads))]

    def record_peak() -> None:
        best = dict(peaks[0])
        for p in peaks[1:]:
            for k, v in p.items():
                if k.startswith("gflops_"):
                    best[k] = max(best.get(k, 0.0), v)
        env["fma_peak"] = best
        env["fma_peak_measurements"] = peaks
        log(f"FMA peak (best of {len(peaks)}): {best}")

    record_peak()
    # In a child process: loading the models here would raise this
    # process's peak RSS, which Linux hands down to every tool it starts
    # (ru_maxrss survives fork and exec), spoiling their memory figures.
    env["flops"] = {}
    for m in a.models:
        if m not in FLOP_MODELS:
            continue
        p = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "flops.py"), os.path.join(a.models_dir, m + ".onnx"),
                            os.path.join(a.models_dir, m + ".inputs"), "--json"], capture_output=True, text=True)
        if p.returncode == 0:
            env["flops"][m] = json.loads(p.stdout.strip().splitlines()[-1])["flops"]
    os.makedirs(a.out, exist_ok=True)
    table = {}
    start = time.perf_counter()
    for m in a.models:
        if m in REDUCED_PRECISION:
            env.setdefault("accuracy", {})[m] = read_accuracy(m, a)
            if "ort" in a.tools and "switchyard" in a.tools:
                env.setdefault("agreement", {})[m] = agreement(m, a)
                log(f"{m}: Switchyard vs ORT {env['agreement'][m]}")
        for t in threads:
            for k in range(a.rounds):
                for tool in a.tools:
                    if tool == "torch" and m in NOT_TORCH:
                        continue
                    # Where the machine moves its vCPUs between core
                    # complexes, this says which placement a run had.
                    trip = core_round_trip() if t > 1 else None
                    r = run_one(tool, m, t, a)
                    if trip is not None:
                        r["core_round_trip_ns"] = trip
                    table.setdefault((m, t, tool), []).append(r)
                    what = r["error"] if "error" in r else f"median {r['median_ms']:.2f} ms ({r['runs']} runs)"
                    log(f"[{time.perf_counter() - start:6.0f} s] {m} threads={t} round {k + 1}/{a.rounds} "
                        f"{tool}: {what}")
                    if m in env["flops"] and tool in PROFILED_TOOLS and not a.no_profile:
                        # Separate from the timed run: ORT's profiler costs
                        # it time per node that would count against it.
                        p = run_one(tool, m, t, a, profile=os.path.join(a.out, f"profile_{tool}"))
                        env.setdefault("profiles", {}).setdefault(f"{m}/{t}/{tool}", []).append(p)
                        if "error" in p:
                            log(f"  profiled run failed: {p['error']}")
            # Written after every model/thread pair so an interrupted run
            # still leaves the finished rows.
            write_outputs(a.out, table, a, env, chart=False)
        peaks.append(fma_peak(max(threads)))
        record_peak()
    write_outputs(a.out, table, a, env, chart=True)
    print(open(os.path.join(a.out, "compare.md")).read())
    log(f"wrote {a.out}/compare.md, compare.csv, compare_raw.json in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
