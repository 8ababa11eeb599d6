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
DIR/<name>.accuracy.json (accuracy.py: top-1 agreement with the float32
model over --accuracy-samples random images, or the largest difference of
BERT's pooler_output). Needs the Python module built (build/python, or
--switchyard-python).
"""

import argparse
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import accuracy  # noqa: E402 - after the path that finds it

MODELS = ["resnet50_int8", "bert_int8"]


def copy_reference(out: str, src: str, dst: str) -> None:
    for kind in ("inputs", "expected"):
        target = os.path.join(out, f"{dst}.{kind}")
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(os.path.join(out, f"{src}.{kind}"), target)


def write_resnet50(q, out: str) -> None:
    src = os.path.join(out, "resnet50.onnx")
    dst = os.path.join(out, "resnet50_int8.onnx")
    shape = accuracy.load_inputs(out, "resnet50")["input"].shape

    class Reader(q.CalibrationDataReader):
        def __init__(self):
            self.items = iter([{"input": x} for x in accuracy.image_batches(16, 1234, shape)])

        def get_next(self):
            return next(self.items, None)

    q.quantize_static(src, dst, Reader(), quant_format=q.QuantFormat.QDQ, per_channel=True,
                      activation_type=q.QuantType.QUInt8, weight_type=q.QuantType.QInt8)
    copy_reference(out, "resnet50", "resnet50_int8")


def write_bert(q, out: str) -> None:
    src = os.path.join(out, "bert.onnx")
    dst = os.path.join(out, "bert_int8.onnx")
    q.quantize_dynamic(src, dst, weight_type=q.QuantType.QInt8)
    copy_reference(out, "bert", "bert_int8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "models"))
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--accuracy-samples", type=int, default=100)
    parser.add_argument("--switchyard-python", default=os.path.join(ROOT, "build", "python"))
    a = parser.parse_args()
    names = accuracy.model_names(parser, a.models, MODELS)
    if a.accuracy_samples <= 0:
        parser.error("--accuracy-samples must be positive")
    for n in names:
        if not os.path.exists(os.path.join(a.out, accuracy.SOURCE[n] + ".onnx")):
            parser.error(f"{a.out}/{accuracy.SOURCE[n]}.onnx not found: "
                         f"run bench/models/export_all.py --out {a.out} first")
    sys.path.insert(0, a.switchyard_python)
    import switchyard as sy
    import switchyard.quantization as q

    for n in names:
        if n == "resnet50_int8":
            write_resnet50(q, a.out)
        else:
            write_bert(q, a.out)
        print(json.dumps(accuracy.write(sy, a.out, n, a.accuracy_samples)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
