#!/usr/bin/python3
"""Multiply-add work of a model's Conv, MatMul and Gemm nodes for given
input shapes (2 FLOPs per multiply-add), from ONNX shape inference.

    /usr/bin/python3 bench/flops.py MODEL.onnx INPUTS_DIR [--json]
"""

import os
import sys

import numpy as np
import onnx
from onnx import shape_inference


def _dims(value_info):
    return [d.dim_value if d.HasField("dim_value") else None for d in value_info.type.tensor_type.shape.dim]


def model_flops(model_path, inputs_dir):
    model = onnx.load(model_path)
    shapes = {}
    for f in os.listdir(inputs_dir):
        if f.endswith(".npy"):
            shapes[f[:-4]] = np.load(os.path.join(inputs_dir, f), mmap_mode="r").shape
    for inp in model.graph.input:
        if inp.name in shapes:
            dims = inp.type.tensor_type.shape.dim
            for d, v in zip(dims, shapes[inp.name]):
                d.ClearField("dim_param")
                d.dim_value = int(v)
    inferred = shape_inference.infer_shapes(model, data_prop=True)
    g = inferred.graph
    known = {vi.name: _dims(vi) for vi in list(g.value_info) + list(g.input) + list(g.output)}
    for init in g.initializer:
        known[init.name] = list(init.dims)

    def prod(xs):
        out = 1
        for x in xs:
            if x is None:
                return None
            out *= x
        return out

    total, unknown = 0, 0
    for node in g.node:
        if node.op_type not in ("Conv", "MatMul", "Gemm"):
            continue
        out = known.get(node.output[0])
        if out is None or prod(out) is None:
            unknown += 1
            continue
        if node.op_type == "Conv":
            w = known.get(node.input[1])
            # W is [Cout, Cin/group, k...]: each output element takes Cin/group * k... multiply-adds.
            total += 2 * prod(out) * w[1] * prod(w[2:]) if w else 0
        elif node.op_type == "MatMul":
            a = known.get(node.input[0])
            k = a[-1] if a else None
            if k is None:
                unknown += 1
                continue
            total += 2 * prod(out) * k
        else:
            a = known.get(node.input[0])
            trans_a = next((x.i for x in node.attribute if x.name == "transA"), 0)
            k = (a[0] if trans_a else a[1]) if a else None
            if k is None:
                unknown += 1
                continue
            total += 2 * prod(out) * k
    return total, unknown


if __name__ == "__main__":
    flops, unknown = model_flops(sys.argv[1], sys.argv[2])
    if "--json" in sys.argv[3:]:
        print(f'{{"flops": {flops}, "unknown_nodes": {unknown}}}')
    else:
        print(f"{flops / 1e9:.3f} GFLOP ({unknown} nodes of unknown shape)")
