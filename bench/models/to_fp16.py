#!/usr/bin/python3
"""Converts an exported float32 model to float16: every float32
initializer, Constant value, graph input/output and value_info becomes
float16, and Cast(to=FLOAT) casts to FLOAT16, so the whole graph computes
in half precision (as models converted for GPU inference do).

    /usr/bin/python3 bench/models/to_fp16.py IN.onnx OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def _to_half(tensor):
    if tensor.data_type != TensorProto.FLOAT:
        return tensor
    array = numpy_helper.to_array(tensor).astype(np.float32)
    # Values beyond float16's range (attention masks of -3.4e38) become +-inf
    # on purpose: the same as the masks half-precision exporters write.
    with np.errstate(over="ignore"):
        half = numpy_helper.from_array(array.astype(np.float16), tensor.name)
    return half


def _retype(value_info):
    t = value_info.type.tensor_type
    if t.elem_type == TensorProto.FLOAT:
        t.elem_type = TensorProto.FLOAT16


def convert(model):
    graph = model.graph
    for i, init in enumerate(graph.initializer):
        graph.initializer[i].CopyFrom(_to_half(init))
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        _retype(vi)
    for node in graph.node:
        for attr in node.attribute:
            if node.op_type == "Constant" and attr.name == "value" and attr.t.data_type == TensorProto.FLOAT:
                attr.t.CopyFrom(_to_half(attr.t))
            if node.op_type == "Cast" and attr.name == "to" and attr.i == TensorProto.FLOAT:
                attr.i = TensorProto.FLOAT16
            if node.op_type == "ConstantOfShape" and attr.name == "value" and attr.t.data_type == TensorProto.FLOAT:
                attr.t.CopyFrom(_to_half(attr.t))
    return model


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    model = onnx.load(sys.argv[1])
    convert(model)
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[2])
    print(f"{sys.argv[1]} -> {sys.argv[2]} (float16)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
