#!/usr/bin/python3
"""Accuracy of the reduced-precision benchmark models against the float32
models they were made from, measured through Switchyard.

    /usr/bin/python3 bench/models/accuracy.py --out DIR
        [--models resnet50_int8,bert_int8,resnet50_fp16,bert_fp16] [--samples 100]

For a ResNet-50 variant: the share of --samples fixed-seed random images
whose top-1 class is the float32 model's. For a BERT variant: the largest
|difference| of pooler_output over as many fixed-seed random token
sequences (random lengths, the rest masked). Writes DIR/<model>.accuracy.json
(bench/compare puts it beside the model's timings) and prints it. Needs the
Python module built (build/python, or --switchyard-python).
"""

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SOURCE = {"resnet50_int8": "resnet50", "bert_int8": "bert", "resnet50_fp16": "resnet50", "bert_fp16": "bert"}


def load_inputs(out: str, name: str) -> dict:
    folder = os.path.join(out, name + ".inputs")
    return {f[:-4]: np.load(os.path.join(folder, f)) for f in sorted(os.listdir(folder)) if f.endswith(".npy")}


def image_batches(count: int, seed: int, shape):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(count)]


def bert_feeds(count: int, seed: int, like: dict):
    rng = np.random.default_rng(seed)
    seq = like["input_ids"].shape[1]
    feeds = []
    for _ in range(count):
        ids = rng.integers(1, 1000, size=like["input_ids"].shape, dtype=np.int64)
        mask = np.ones_like(like["attention_mask"])
        mask[:, rng.integers(seq // 2, seq + 1):] = 0
        feeds.append({"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
    return feeds


def as_input_types(session, feed: dict) -> dict:
    """The feed with float arrays cast to what the model takes (float16)."""
    types = {i.name: i.type for i in session.get_inputs()}
    return {k: v.astype(np.float16) if types.get(k) == "tensor(float16)" else v for k, v in feed.items()}


def measure(sy, out: str, name: str, samples: int) -> dict:
    reference = sy.InferenceSession(os.path.join(out, SOURCE[name] + ".onnx"))
    reduced = sy.InferenceSession(os.path.join(out, name + ".onnx"))
    if SOURCE[name] == "resnet50":
        shape = load_inputs(out, "resnet50")["input"].shape
        agree = 0
        for x in image_batches(samples, 4321, shape):
            a = reference.run(None, {"input": x})[0]
            b = reduced.run(None, as_input_types(reduced, {"input": x}))[0]
            agree += int(np.argmax(a) == np.argmax(b))
        return {"model": name, "metric": "top-1 agreement with float32", "samples": samples, "value": agree / samples}
    worst, scale = 0.0, 0.0
    for feed in bert_feeds(samples, 4321, load_inputs(out, "bert")):
        a = reference.run(["pooler_output"], feed)[0]
        b = reduced.run(["pooler_output"], feed)[0].astype(np.float32)
        worst = max(worst, float(np.max(np.abs(a - b))))
        scale = max(scale, float(np.max(np.abs(a))))
    return {"model": name, "metric": "max abs difference of pooler_output", "samples": samples, "value": worst,
            "float32_max_abs": scale}


def write(sy, out: str, name: str, samples: int) -> dict:
    result = measure(sy, out, name, samples)
    with open(os.path.join(out, name + ".accuracy.json"), "w") as f:
        json.dump(result, f, indent=1)
    return result


def model_names(parser, text: str, choices) -> list:
    """The comma-separated names in `text`, each one of `choices`."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in choices]
    if unknown:
        parser.error(f"unknown model(s) {unknown}; choose from {list(choices)}")
    return names


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "models"))
    parser.add_argument("--models", default=",".join(SOURCE))
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--switchyard-python", default=os.path.join(ROOT, "build", "python"))
    a = parser.parse_args()
    names = model_names(parser, a.models, SOURCE)
    if a.samples <= 0:
        parser.error("--samples must be positive")
    for n in names:
        for m in (n, SOURCE[n]):
            if not os.path.exists(os.path.join(a.out, m + ".onnx")):
                parser.error(f"{a.out}/{m}.onnx not found (bench/models/export_all.py, quantize_models.py)")
    sys.path.insert(0, a.switchyard_python)
    import switchyard as sy

    for n in names:
        print(json.dumps(write(sy, a.out, n, a.samples)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
