#!/usr/bin/python3
"""Switchyard's CUDA provider against PyTorch on the same GPU, side by side.

    /usr/bin/python3 bench/gpu_compare.py [--models-dir build/models] [--runs 50] [--rounds 3]

For ResNet-50 (batch 1 and 32) and the BERT-like encoder (batch 1 and 8,
sequence 128), in float32 (TF32 off on both sides) and float16, it times
  - Switchyard: InferenceSession with CUDAExecutionProvider, inputs and
    outputs bound on the GPU through IOBinding, fallthrough an error;
  - PyTorch: the same module (bench/models, the same seed as the ONNX
    export), on the GPU, inputs already there, torch.cuda.synchronize()
    after each run;
interleaving the two over --rounds rounds, and reports the median latency,
the ratio Switchyard / PyTorch, and the outputs' largest relative error
(float32 against the CPU provider, float16 against float32 on the GPU).
Writes bench/results/gpu_compare.md and .csv.

Needs an NVIDIA GPU, torch with CUDA, the exported models
(bench/models/export_all.py) and a build with libswitchyard_cuda.so.
"""

import argparse
import csv
import importlib
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "models"))
sys.path.insert(0, os.path.join(ROOT, "build", "python"))

import numpy as np  # noqa: E402

CASES = [("resnet50", 1), ("resnet50", 32), ("bert", 1), ("bert", 8)]


def rel_error(got, want):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    return float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))


def make_inputs(model, batch):
    rng = np.random.default_rng(0)
    if model == "resnet50":
        return {"input": rng.standard_normal((batch, 3, 224, 224)).astype(np.float32)}
    return {
        "input_ids": rng.integers(0, 30522, (batch, 128)).astype(np.int64),
        "token_type_ids": np.zeros((batch, 128), np.int64),
        "attention_mask": np.ones((batch, 128), np.int64),
    }


def time_it(fn, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000.0)
    return times


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models-dir", default=os.path.join(ROOT, "build", "models"))
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", default=os.path.join(HERE, "results", "gpu_compare"))
    args = p.parse_args()

    import torch
    import switchyard as sy

    if not torch.cuda.is_available():
        print("gpu_compare: torch sees no CUDA device")
        return 2
    if "CUDAExecutionProvider" not in sy.get_available_providers():
        print("gpu_compare: Switchyard's CUDA provider is not available here:")
        print(sy.doctor())
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    rows = []
    for model, batch in CASES:
        fp32_path = os.path.join(args.models_dir, model + ".onnx")
        fp16_path = os.path.join(args.models_dir, model + ".fp16.onnx")
        if not os.path.exists(fp16_path):
            subprocess.check_call([sys.executable, os.path.join(HERE, "models", "to_fp16.py"), fp32_path, fp16_path])
        feeds = make_inputs(model, batch)
        spec = importlib.import_module(model).make(small=False, seed=0)
        cpu = sy.InferenceSession(fp32_path, providers=["CPUExecutionProvider"])
        cpu_out = cpu.run(None, feeds)[0]
        gpu32_out = None
        for dtype in ("float32", "float16"):
            path = fp32_path if dtype == "float32" else fp16_path
            options = sy.SessionOptions()
            sess = sy.InferenceSession(path, options, providers=[("CUDAExecutionProvider", {"use_tf32": "0"}),
                                                                 "CPUExecutionProvider"])
            binding = sess.io_binding()
            for name, value in feeds.items():
                if value.dtype == np.float32 and dtype == "float16":
                    value = value.astype(np.float16)
                binding.bind_ortvalue_input(name, sy.OrtValue.ortvalue_from_numpy(value, "cuda", 0))
            out_name = sess.get_outputs()[0].name
            binding.bind_output(out_name, "cuda")

            module = spec.module.eval().cuda()
            if dtype == "float16":
                module = module.half()
            torch_inputs = []
            for name, value in feeds.items():
                t = torch.from_numpy(value).cuda()
                torch_inputs.append(t.half() if (dtype == "float16" and t.is_floating_point()) else t)

            def run_sy():
                sess.run_with_iobinding(binding)

            def run_torch():
                with torch.no_grad():
                    module(*torch_inputs)
                torch.cuda.synchronize()

            for _ in range(args.warmup):
                run_sy()
                run_torch()
            sy_times, torch_times = [], []
            for _ in range(args.rounds):
                sy_times += time_it(run_sy, args.runs)
                torch_times += time_it(run_torch, args.runs)
            out = binding.copy_outputs_to_cpu()[0]
            if dtype == "float32":
                gpu32_out = out
                err = rel_error(out, cpu_out)
            else:
                err = rel_error(out.astype(np.float32), gpu32_out)
            sy_ms, torch_ms = statistics.median(sy_times), statistics.median(torch_times)
            rows.append({"model": model, "batch": batch, "dtype": dtype, "switchyard_ms": round(sy_ms, 3),
                         "pytorch_ms": round(torch_ms, 3), "ratio": round(sy_ms / torch_ms, 3),
                         "max_rel_error": f"{err:.2e}", "gpu_nodes": sess.get_placement().get("nodes_per_provider")})
            print(rows[-1], flush=True)

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    with open(args.out + ".md", "w") as f:
        f.write(f"GPU: {torch.cuda.get_device_name(0)}; median of {args.rounds}x{args.runs} runs; TF32 off\n\n")
        f.write("| model | batch | dtype | Switchyard ms | PyTorch ms | Switchyard/PyTorch | max rel error |\n")
        f.write("|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['model']} | {r['batch']} | {r['dtype']} | {r['switchyard_ms']} | {r['pytorch_ms']} | "
                    f"{r['ratio']} | {r['max_rel_error']} |\n")
    print(f"wrote {args.out}.md and .csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
