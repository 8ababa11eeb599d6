#!/usr/bin/env python3
"""Writes the libFuzzer dictionary for fuzz_model: the protobuf field keys of
the ONNX messages (so mutations insert well-formed fields) and every op type,
domain and attribute name the schema tables know.

    /usr/bin/python3 tests/fuzz/make_dict.py > onnx.dict
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (message, field, number, wire type): 0 varint, 1 64-bit, 2 length-delimited, 5 32-bit.
FIELDS = [
    ("model", "ir_version", 1, 0), ("model", "producer_name", 2, 2), ("model", "graph", 7, 2),
    ("model", "opset_import", 8, 2), ("model", "metadata_props", 14, 2), ("model", "functions", 25, 2),
    ("graph", "node", 1, 2), ("graph", "name", 2, 2), ("graph", "initializer", 5, 2),
    ("graph", "input", 11, 2), ("graph", "output", 12, 2), ("graph", "value_info", 13, 2),
    ("graph", "sparse_initializer", 15, 2),
    ("node", "input", 1, 2), ("node", "output", 2, 2), ("node", "name", 3, 2), ("node", "op_type", 4, 2),
    ("node", "attribute", 5, 2), ("node", "domain", 7, 2),
    ("attribute", "name", 1, 2), ("attribute", "f", 2, 5), ("attribute", "i", 3, 0), ("attribute", "s", 4, 2),
    ("attribute", "t", 5, 2), ("attribute", "g", 6, 2), ("attribute", "floats", 7, 2), ("attribute", "ints", 8, 2),
    ("attribute", "ints_unpacked", 8, 0), ("attribute", "strings", 9, 2), ("attribute", "graphs", 11, 2),
    ("attribute", "type", 20, 0),
    ("tensor", "dims", 1, 0), ("tensor", "dims_packed", 1, 2), ("tensor", "data_type", 2, 0),
    ("tensor", "float_data", 4, 2), ("tensor", "int32_data", 5, 2), ("tensor", "string_data", 6, 2),
    ("tensor", "int64_data", 7, 2), ("tensor", "name", 8, 2), ("tensor", "raw_data", 9, 2),
    ("tensor", "double_data", 10, 2), ("tensor", "uint64_data", 11, 2), ("tensor", "external_data", 13, 2),
    ("tensor", "data_location", 14, 0),
    ("value_info", "name", 1, 2), ("value_info", "type", 2, 2),
    ("type", "tensor_type", 1, 2), ("type", "sequence_type", 4, 2), ("type", "map_type", 5, 2),
    ("type", "optional_type", 9, 2), ("tensor_type", "elem_type", 1, 0), ("tensor_type", "shape", 2, 2),
    ("shape", "dim", 1, 2), ("dim", "dim_value", 1, 0), ("dim", "dim_param", 2, 2),
    ("opset", "domain", 1, 2), ("opset", "version", 2, 0),
]


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def escape(data):
    return "".join(f"\\x{b:02x}" for b in data)


def main():
    lines = [f'{m}_{f}="{escape(varint(n << 3 | w))}"' for m, f, n, w in FIELDS]
    names = set()
    for inc in ("op_versions.inc", "op_attributes.inc"):
        path = os.path.join(ROOT, "src", "schema", inc)
        if os.path.exists(path):
            names.update(re.findall(r'"([A-Za-z_][A-Za-z0-9_.]*)"', open(path).read()))
    names.update(["com.switchyard", "ai.onnx.ml", "ai.onnx", "location", "offset", "length", "batch"])
    # com.switchyard's fused ops (src/schema/fused.cc) and their attributes.
    names.update(["FusedConv", "FusedMatMul", "activation", "activation_params", "alpha", "input_layout",
                  "output_layout", "residual_layout", "NCHW", "NCHW16c", "FusedAttention", "masked_scores",
                  "causal_fill", "add", "replace"])
    # As whole length-delimited strings (length byte first): the form they take in a message.
    for name in sorted(names):
        raw = name.encode()
        lines.append(f'"{escape(varint(len(raw)) + raw)}"')
    # Values that make shapes and sizes interesting.
    for v in (0, 1, 2, 255, 65535, 2**31 - 1, 2**32, 2**62, 2**63 - 1):
        lines.append(f'"{escape(varint(v))}"')
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
