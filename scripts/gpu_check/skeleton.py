#!/usr/bin/env python3
"""Model skeletons: an ONNX model without the bytes of its large float
weights, and the same model filled again with weights made from a seed.

    skeleton.py strip MODEL.onnx OUT.skel.onnx
    skeleton.py fill OUT.skel.onnx MODEL.onnx

The device check (scripts/gpu_check.sh) must fit ResNet-50, MobileNetV2 and
the BERT- and GPT-2-like models into a 64 MiB upload; their float32 weights
alone are about 1 GB. `strip` keeps the graph, every integer and small
initializer, and for each float initializer of more than kKeepElements
elements only its type, shape, mean and standard deviation (in the
initializer's doc_string). `fill` writes weights with that mean and standard
deviation from a counter-based generator computed in integer numpy
arithmetic, so the filled model is bit for bit the same on any machine and
numpy version: the CPU reference outputs computed here match the model
filled on the device. Values are uniform on mean +- sqrt(3) std, which keeps
each layer's scale as exported.

Runs with Debian's Python here (numpy 1.24, onnx 1.12) and the device's
Python 3.12 (numpy 2, onnx 1.2x).
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

kKeepElements = 4096
kTag = "sy-skeleton"
kFloatTypes = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16, TensorProto.DOUBLE: np.float64}

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S40 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(40)


def _name_seed(name):
    """A 64-bit seed from the initializer's name (FNV-1a), the same everywhere."""
    h = 0xCBF29CE484222325
    for b in name.encode("utf-8"):
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return np.uint64(h)


def uniform01(name, count):
    """`count` float64 values in [0, 1): splitmix64 of (index, name), in chunks."""
    out = np.empty(count, dtype=np.float64)
    seed = _name_seed(name)
    chunk = 1 << 22
    with np.errstate(over="ignore"):
        for start in range(0, count, chunk):
            n = min(chunk, count - start)
            x = np.arange(start, start + n, dtype=np.uint64) * _M1 + seed
            x ^= x >> _S30
            x *= _M2
            x ^= x >> _S27
            x *= _M3
            x ^= x >> _S31
            out[start:start + n] = (x >> _S40).astype(np.float64) * (1.0 / (1 << 24))
    return out


def strip(src, dst):
    model = onnx.load(src)
    kept = stripped = 0
    for init in model.graph.initializer:
        count = int(np.prod(init.dims)) if len(init.dims) else 1
        if init.data_type not in kFloatTypes or count <= kKeepElements:
            kept += 1
            continue
        values = numpy_helper.to_array(init).astype(np.float64)
        mean, std = float(values.mean()), float(values.std())
        if not (np.isfinite(mean) and np.isfinite(std)):
            raise SystemExit(f"skeleton: {src}: initializer {init.name} has non-finite values")
        name, dims, dtype = init.name, list(init.dims), init.data_type
        init.Clear()
        init.name, init.data_type = name, dtype
        init.dims.extend(dims)
        init.doc_string = f"{kTag} mean={mean!r} std={std!r}"
        stripped += 1
    entry = model.metadata_props.add()
    entry.key, entry.value = kTag, "1"
    onnx.save(model, dst)
    print(f"skeleton: {src} -> {dst}: {stripped} weights stripped, {kept} kept")


def fill(src, dst):
    model = onnx.load(src)
    filled = 0
    for init in model.graph.initializer:
        if not init.doc_string.startswith(kTag):
            continue
        fields = dict(item.split("=", 1) for item in init.doc_string.split()[1:])
        mean, std = float(fields["mean"]), float(fields["std"])
        count = int(np.prod(init.dims)) if len(init.dims) else 1
        values = mean + (uniform01(init.name, count) * 2.0 - 1.0) * (std * np.sqrt(3.0))
        array = values.astype(kFloatTypes[init.data_type]).reshape(list(init.dims))
        init.CopyFrom(numpy_helper.from_array(array, init.name))
        filled += 1
    for i, entry in enumerate(model.metadata_props):
        if entry.key == kTag:
            del model.metadata_props[i]
            break
    onnx.save(model, dst)
    print(f"skeleton: {src} -> {dst}: {filled} weights filled")


def main(argv):
    if len(argv) != 4 or argv[1] not in ("strip", "fill"):
        print(__doc__)
        return 2
    (strip if argv[1] == "strip" else fill)(argv[2], argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
