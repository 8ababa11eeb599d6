#!/usr/bin/python3
"""Writes the int8 benchmark models with switchyard.quantization, from the
float32 models export_all.py wrote, and measures their accuracy.

    /usr/bin/python3 bench/models/quantize_models.py --out DIR [--models resnet50_int8,bert_int8]
        [--accuracy-samples 100]

  resnet50_int8  quantize_static, QDQ, per-channel int8 weights, uint8
                 activations, MinMax ranges from 16 fixed-seed random images
                 (calibration runs through Switchyard)
  bert_int8      quantize_dynamic, int8 weights (MatMul per-tensor)

Each gets DIR/<name>.inputs (the float model's) and DIR/<name>.expected
(the float32 model's outputs: a reference for accuracy, not equality), and
DIR/<name>.accuracy.json: for resnet50_int8 the share of --accuracy-samples
fixed-seed random images whose top-1 class matches the float32 model's; for
bert_int8 the largest |difference| of pooler_output over as many random
token sequences. Both run through Switchyard. Needs the Python module built
(build/python, or --switchyard-python).
"""

import argparse
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = ["resnet50_int8", "bert_int8"]
SOURCE = {"resnet50_int8": "resnet50", "bert_int8": "bert"}


def image_batches(count: int, seed: int, shape):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(count)]


def bert_feeds(count: int, seed: int, like: dict):
    rng = np.random.default_rng(seed)
    feeds = []
    seq = like["input_ids"].shape[1]
    for _ in range(count):
        ids = rng.integers(1, 1000, size=like["input_ids"].shape, dtype=np.int64)
        mask = np.ones_like(like["attention_mask"])
        mask[:, rng.integers(seq // 2, seq + 1):] = 0
        feeds.append({"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
    return feeds


def copy_reference(out: str, src: str, dst: str) -> None:
    for kind in ("inputs", "expected"):
        target = os.path.join(out, f"{dst}.{kind}")
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(os.path.join(out, f"{src}.{kind}"), target)


def load_inputs(out: str, name: str) -> dict:
    folder = os.path.join(out, name + ".inputs")
    return {f[:-4]: np.load(os.path.join(folder, f)) for f in sorted(os.listdir(folder)) if f.endswith(".npy")}


def write_resnet50(sy, q, out: str, samples: int) -> dict:
    src = os.path.join(out, "resnet50.onnx")
    dst = os.path.join(out, "resnet50_int8.onnx")
    shape = load_inputs(out, "resnet50")["input"].shape

    class Reader(q.CalibrationDataReader):
        def __init__(self):
            self.items = iter([{"input": x} for x in image_batches(16, 1234, shape)])

        def get_next(self):
            return next(self.items, None)

    q.quantize_static(src, dst, Reader(), quant_format=q.QuantFormat.QDQ, per_channel=True,
                      activation_type=q.QuantType.QUInt8, weight_type=q.QuantType.QInt8)
    copy_reference(out, "resnet50", "resnet50_int8")
    f32 = sy.InferenceSession(src)
    i8 = sy.InferenceSession(dst)
    agree = 0
    for x in image_batches(samples, 4321, shape):
        a = f32.run(None, {"input": x})[0]
        b = i8.run(None, {"input": x})[0]
        agree += int(np.argmax(a) == np.argmax(b))
    return {"model": "resnet50_int8", "metric": "top-1 agreement with float32", "samples": samples,
            "value": agree / samples}


def write_bert(sy, q, out: str, samples: int) -> dict:
    src = os.path.join(out, "bert.onnx")
    dst = os.path.join(out, "bert_int8.onnx")
    q.quantize_dynamic(src, dst, weight_type=q.QuantType.QInt8)
    copy_reference(out, "bert", "bert_int8")
    f32 = sy.InferenceSession(src)
    i8 = sy.InferenceSession(dst)
    worst, scale = 0.0, 0.0
    for feed in bert_feeds(samples, 4321, load_inputs(out, "bert")):
        a = f32.run(["pooler_output"], feed)[0]
        b = i8.run(["pooler_output"], feed)[0]
        worst = max(worst, float(np.max(np.abs(a - b))))
        scale = max(scale, float(np.max(np.abs(a))))
    return {"model": "bert_int8", "metric": "max |pooler_output - float32's|", "samples": samples,
            "value": worst, "float32_max_abs": scale}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "models"))
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--accuracy-samples", type=int, default=100)
    parser.add_argument("--switchyard-python", default=os.path.join(ROOT, "build", "python"))
    a = parser.parse_args()
    names = [n.strip() for n in a.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {unknown}; choose from {MODELS}")
    if a.accuracy_samples <= 0:
        parser.error("--accuracy-samples must be positive")
    for n in names:
        if not os.path.exists(os.path.join(a.out, SOURCE[n] + ".onnx")):
            parser.error(f"{a.out}/{SOURCE[n]}.onnx not found: run bench/models/export_all.py --out {a.out} first")
    sys.path.insert(0, a.switchyard_python)
    import switchyard as sy
    import switchyard.quantization as q

    for n in names:
        result = write_resnet50(sy, q, a.out, a.accuracy_samples) if n == "resnet50_int8" else write_bert(
            sy, q, a.out, a.accuracy_samples)
        with open(os.path.join(a.out, n + ".accuracy.json"), "w") as f:
            json.dump(result, f, indent=1)
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
