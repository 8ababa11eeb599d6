#!/usr/bin/python3
"""Hostile-input suite: malformed models, external-data attacks, absurd
shapes, special files, bad CLI arguments and bad Python feeds.

    /usr/bin/python3 tests/hostile/run.py --build BUILD_DIR [-k SUBSTRING] [-j N] [--keep]

Every case runs in its own subprocess under a timeout and an address-space
cap, so a regression shows up as a failed case, not as a machine that swaps
or hangs. Each case declares the outcome it must get (a clear error whose
message matches a pattern, or the right result, compared with numpy), and
the runner sorts what it got into: clear error, right result, crash
(killed by a signal), hang (timeout) or wrong (a different answer, an error
where a result was due or success where an error was due). See README.md.
"""

import argparse
import dataclasses
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

TIMEOUT_S = 30
ADDRESS_SPACE_BYTES = 4 << 30
OUTCOMES = ("clear error", "right result", "crash", "hang", "wrong")
FAMILIES = ("model", "external", "shapes", "special", "cli", "feeds")

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)

REPO = Path(__file__).resolve().parents[2]
DIGITS = REPO / "examples" / "digits" / "digits_cnn.onnx"

# A message that is only the name of a C++ exception is not a clear error:
# it means an exception escaped the core instead of becoming a Status.
UNCLEAR = r"bad_alloc|std::exception|unknown exception|terminate called|Unable to cast"

# What an error about a size that cannot be allocated or computed says.
TOO_BIG = r"overflow|too large|too big|exceed|out of memory|allocat|larger than|limit|needs more than"


@dataclasses.dataclass
class Expect:
    """error: the pattern (or tuple of patterns, all of which) a clear error
    must match; None: an error is wrong. result: True where the right result
    is acceptable; for the CLI, a pattern its standard output must match."""

    error: str | tuple | None = None
    result: bool | str = False

    def error_patterns(self):
        return self.error if isinstance(self.error, tuple) else (self.error,)

    def describe(self):
        parts = []
        if self.error is not None:
            parts.append("error " + " and ".join(f"/{p}/" for p in self.error_patterns()))
        if self.result:
            parts.append("right result" + (f" /{self.result}/" if isinstance(self.result, str) else ""))
        return " or ".join(parts)


def error(pattern):
    return Expect(error=pattern)


def result(pattern=True):
    return Expect(result=pattern)


@dataclasses.dataclass
class Case:
    family: str
    name: str
    expect: Expect
    argv: list | None = None  # CLI: the arguments after the binary
    func: str | None = None  # Python: a child_* function of this file
    params: dict = dataclasses.field(default_factory=dict)

    @property
    def via(self):
        return "cli" if self.argv is not None else "py"


# ---- building models ---------------------------------------------------------


def onnx_modules():
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    return onnx, TensorProto, helper, numpy_helper


def make_model(nodes, inputs, outputs, initializers=(), opset=17, ir_version=8, domain_opsets=()):
    _, _, helper, _ = onnx_modules()
    graph = helper.make_graph(list(nodes), "hostile", list(inputs), list(outputs), list(initializers))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in domain_opsets]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="hostile")
    model.ir_version = ir_version
    return model


def tensor_info(name, elem, shape):
    _, _, helper, _ = onnx_modules()
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, array):
    _, _, _, numpy_helper = onnx_modules()
    return numpy_helper.from_array(np.asarray(array), name)


class Workdir:
    """Writes models, arrays and special files into the temporary folder and
    hands back their paths."""

    def __init__(self, root, build):
        self.root = Path(root)
        self.build = Path(build)
        self.count = 0

    def path(self, stem, suffix):
        self.count += 1
        return str(self.root / f"{self.count:03d}_{stem}{suffix}")

    def model(self, stem, model):
        p = self.path(stem, ".onnx")
        Path(p).write_bytes(model.SerializeToString())
        return p

    def raw(self, stem, data, suffix=".onnx"):
        p = self.path(stem, suffix)
        Path(p).write_bytes(data)
        return p

    def array(self, stem, array):
        p = self.path(stem, ".npy")
        np.save(p, array)
        return p

    def folder(self, stem):
        p = Path(self.path(stem, ""))
        p.mkdir()
        return p


def add_model():
    _, TP, helper, _ = onnx_modules()
    return make_model([helper.make_node("Add", ["X", "Y"], ["Z"], name="add")],
                      [tensor_info("X", TP.FLOAT, [2, 3]), tensor_info("Y", TP.FLOAT, [2, 3])],
                      [tensor_info("Z", TP.FLOAT, [2, 3])])


X23 = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
Y23 = np.full((2, 3), 0.5, dtype=np.float32)


def py_case(family, name, expect, model, w, feeds=None, want=None, **options):
    """A Python case: load `model` (a path), run it on `feeds` (name ->
    array) and compare with `want` (a list of arrays) where given."""
    params = {"model": model, "feeds": {k: w.array(f"in_{k}", v) for k, v in (feeds or {}).items()},
              "want": [w.array("want", v) for v in want] if want is not None else None}
    params.update(options)
    return Case(family, name, expect, func="child_run", params=params)


def cli_case(family, name, expect, argv):
    return Case(family, name, expect, argv=[str(a) for a in argv])


def cli_run_case(family, name, expect, model, w, feeds=None):
    argv = ["run", model]
    for k, v in (feeds or {}).items():
        argv += ["--input", f"{k}={w.array(f'in_{k}', v)}"]
    return cli_case(family, name, expect, argv)


def both(family, name, expect, model, w, feeds=None, want=None, cli_result=None):
    """The same model through the CLI and through Python."""
    cli_expect = Expect(error=expect.error, result=cli_result or False)
    return [cli_run_case(family, name, cli_expect, model, w, feeds),
            py_case(family, name, expect, model, w, feeds, want)]


# ---- family 1: malformed model files ---------------------------------------


def family_model(w):
    onnx, TP, helper, _ = onnx_modules()
    cases = []
    base = add_model()
    # An initializer makes the graph a longer run of bytes to cut into.
    base.graph.initializer.append(const("unused", np.arange(16, dtype=np.float32)))
    data = base.SerializeToString()
    graph_bytes = base.graph.SerializeToString()
    start = data.index(graph_bytes)
    end = start + len(graph_bytes)
    feeds = {"X": X23, "Y": Y23}
    # Any cut inside the graph field leaves its length prefix pointing past
    # the end of the file, so each one is unparseable, whatever the offset.
    parse = r"InvalidProtobuf|protobuf|parse"
    for i, offset in enumerate(sorted({start + 1, start + 2, start + 5, start + len(graph_bytes) // 3,
                                       start + len(graph_bytes) // 2, end - 10, end - 1})):
        cases += both("model", f"truncated inside the graph at byte {offset} of {len(data)}", error(parse),
                      w.raw(f"trunc{i}", data[:offset]), w, feeds)
    # A cut before the graph leaves a model with no graph at all.
    cases += both("model", "truncated before the graph", error(r"graph|InvalidProtobuf|InvalidGraph"),
                  w.raw("trunc_head", data[:start - 2]), w, feeds)
    cases += both("model", "empty file", error(r"empty|graph|protobuf|InvalidGraph"), w.raw("empty", b""), w, feeds)
    rng = np.random.default_rng(32)
    for size in (1, 100, 4096):
        cases += both("model", f"{size} random bytes", error(r"InvalidProtobuf|InvalidGraph|protobuf|graph"),
                      w.raw(f"random{size}", rng.integers(0, 256, size, dtype=np.uint8).tobytes()), w, feeds)
    # Field 7 (graph) sent as a varint, field 1 (ir_version) as bytes.
    cases += both("model", "graph field with the varint wire type", error(r"InvalidProtobuf|InvalidGraph|graph"),
                  w.raw("wiretype", b"\x08\x08\x38\x05" + data[end:]), w, feeds)
    cases += both("model", "ir_version as a length-delimited field", error(r"InvalidProtobuf|protobuf|ir_version"),
                  w.raw("wiretype2", b"\x0a\x02ab" + data[2:]), w, feeds)

    def variant(stem, mutate):
        m = add_model()
        mutate(m)
        return w.model(stem, m)

    x_info = tensor_info("X", TP.FLOAT, [2, 3])
    z_info = tensor_info("Z", TP.FLOAT, [2, 3])
    graph_error = r"InvalidGraph|InvalidArgument|NotImplemented"
    mutations = [
        ("cyclic graph (A = Add(X, B), B = Relu(A))", r"cycl",
         make_model([helper.make_node("Add", ["X", "B"], ["A"], name="a"), helper.make_node("Relu", ["A"], ["B"], name="b"),
                     helper.make_node("Identity", ["A"], ["Z"])], [x_info], [z_info])),
        ("self-loop (A = Relu(A))", r"cycl|'A'",
         make_model([helper.make_node("Relu", ["A"], ["A"], name="r"), helper.make_node("Add", ["X", "A"], ["Z"])],
                    [x_info], [z_info])),
        ("two nodes write the same output", r"'Z'.*(twice|more than one|duplicate|already)|(twice|more than one|duplicate|already).*'Z'",
         make_model([helper.make_node("Relu", ["X"], ["Z"]), helper.make_node("Neg", ["X"], ["Z"])], [x_info], [z_info])),
        ("duplicate graph input names", r"'X'.*(twice|duplicate|more than once|already)|(twice|duplicate|more than once|already).*'X'",
         make_model([helper.make_node("Relu", ["X"], ["Z"])], [x_info, x_info], [z_info])),
        ("an initializer with the name of a node output", r"'Z'.*(twice|duplicate|more than one|already|initializer)",
         make_model([helper.make_node("Relu", ["X"], ["Z"])], [x_info], [z_info],
                    [const("Z", np.zeros((2, 3), np.float32))])),
        ("node reads an undefined value", r"'Q'",
         make_model([helper.make_node("Add", ["X", "Q"], ["Z"])], [x_info], [z_info])),
        ("graph output nothing produces", r"'W'",
         make_model([helper.make_node("Relu", ["X"], ["Z"])], [x_info], [z_info, tensor_info("W", TP.FLOAT, [2, 3])])),
        ("node with an empty op_type", graph_error,
         make_model([helper.make_node("", ["X"], ["Z"])], [x_info], [z_info])),
        ("unknown op in the default domain", r"FooBar",
         make_model([helper.make_node("FooBar", ["X"], ["Z"])], [x_info], [z_info])),
        ("unknown domain", r"com\.evil",
         make_model([helper.make_node("Relu", ["X"], ["Z"], domain="com.evil")], [x_info], [z_info],
                    domain_opsets=[("com.evil", 1)])),
        ("op in a domain with no opset import", r"com\.evil|domain|opset",
         make_model([helper.make_node("Relu", ["X"], ["Z"], domain="com.evil")], [x_info], [z_info])),
        ("opset 0", r"opset", make_model([helper.make_node("Relu", ["X"], ["Z"])], [x_info], [z_info], opset=0)),
        ("opset 9999", r"opset|9999", make_model([helper.make_node("Relu", ["X"], ["Z"])], [x_info], [z_info], opset=9999)),
        ("opset -1", r"opset|-1", make_model([helper.make_node("Relu", ["X"], ["Z"])], [x_info], [z_info], opset=-1)),
        ("ir_version 99", r"ir_version", make_model([helper.make_node("Relu", ["X"], ["Z"])], [x_info], [z_info],
                                                          ir_version=99)),
        ("unknown attribute on Relu", r"bogus",
         make_model([helper.make_node("Relu", ["X"], ["Z"], bogus=1)], [x_info], [z_info])),
        ("Transpose perm given as a float", r"perm.*(type|float|ints)",
         make_model([helper.make_node("Transpose", ["X"], ["Z"], perm=1.5)], [x_info], [tensor_info("Z", TP.FLOAT, [3, 2])])),
        ("LeakyRelu alpha given as an int", r"alpha.*(type|int|float)",
         make_model([helper.make_node("LeakyRelu", ["X"], ["Z"], alpha=2)], [x_info], [z_info])),
        ("Softmax axis given as a string", r"axis.*(type|string|int)",
         make_model([helper.make_node("Softmax", ["X"], ["Z"], axis="1")], [x_info], [z_info])),
        ("Relu with two inputs", r"input", make_model([helper.make_node("Relu", ["X", "X"], ["Z"])], [x_info], [z_info])),
        ("Add with one input", r"input", make_model([helper.make_node("Add", ["X"], ["Z"])], [x_info], [z_info])),
        ("a string input to Relu", r"string|type",
         make_model([helper.make_node("Relu", ["X"], ["Z"])], [tensor_info("X", TP.STRING, [2, 3])], [z_info])),
        ("Add of float and int64", r"type|int64",
         make_model([helper.make_node("Add", ["X", "Y"], ["Z"])], [x_info, tensor_info("Y", TP.INT64, [2, 3])], [z_info])),
    ]
    for name, pattern, m in mutations:
        cases += both("model", name, error(pattern), w.model("graph", m), w, {"X": X23})

    def initializer_case(name, pattern, tensor):
        m = make_model([helper.make_node("Add", ["X", "W"], ["Z"])], [x_info], [z_info], [tensor])
        return both("model", name, error(pattern), w.model("init", m), w, {"X": X23})

    def raw_tensor(dims, data_type=TP.FLOAT, raw=None, floats=None, int64s=None):
        t = onnx.TensorProto(name="W", dims=dims, data_type=data_type)
        if raw is not None:
            t.raw_data = raw
        if floats is not None:
            t.float_data.extend(floats)
        if int64s is not None:
            t.int64_data.extend(int64s)
        return t

    cases += initializer_case("declared [1000000] with no data", r"'W'", raw_tensor([1000000]))
    cases += initializer_case("declared [2,3] with 4 bytes of raw data", r"'W'", raw_tensor([2, 3], raw=b"\0" * 4))
    cases += initializer_case("declared [2,3] with 7 floats", r"'W'", raw_tensor([2, 3], floats=[1.0] * 7))
    cases += initializer_case("float tensor holding int64_data", r"'W'", raw_tensor([2, 3], int64s=[1] * 6))
    cases += initializer_case("negative dim [-1,3]", r"'W'.*(negative|-1)|(negative|-1).*'W'", raw_tensor([-1, 3], floats=[1.0] * 3))
    cases += initializer_case("dims [2^40, 2^40] (product overflows)", TOO_BIG, raw_tensor([2**40, 2**40]))
    cases += initializer_case("dims [2^62, 4] (bytes overflow)", TOO_BIG, raw_tensor([2**62, 4]))
    cases += initializer_case("data_type 999", r"type|999", raw_tensor([2, 3], data_type=999, raw=b"\0" * 24))
    cases += initializer_case("data_type UNDEFINED", r"type|undefined", raw_tensor([2, 3], data_type=0, raw=b"\0" * 24))
    # The same bytes handed to Python's InferenceSession directly.
    for name, blob in (("empty bytes", b""), ("truncated bytes", data[:start + 5]),
                       ("random bytes", rng.integers(0, 256, 300, dtype=np.uint8).tobytes())):
        cases.append(Case("model", f"{name} as InferenceSession(bytes)", error(r"InvalidProtobuf|protobuf|empty"),
                          func="child_open_bytes", params={"path": w.raw("blob", blob)}))
    # An unknown attribute is refused unless the session relaxes the rule;
    # then the model runs and the attribute is ignored.
    relaxed = w.model("relaxed", make_model([helper.make_node("Relu", ["X"], ["Z"], bogus=1)], [x_info], [z_info]))
    cases.append(py_case("model", "unknown attribute with session.allow_unknown_attributes=1", result(), relaxed, w,
                         {"X": X23}, [np.maximum(X23, 0)], config={"session.allow_unknown_attributes": "1"}))
    return cases


# ---- family 2: external data -------------------------------------------------


def family_external(w):
    onnx, TP, helper, _ = onnx_modules()
    cases = []
    weights = np.arange(6, dtype=np.float32).reshape(2, 3)

    def external_model(stem, location, dims=(2, 3), offset=None, length=None, data=weights.tobytes(), extra=()):
        """A folder holding model.onnx (Z = X + W, W external at `location`)
        and, unless `data` is None, weights.bin."""
        folder = w.folder(stem)
        if data is not None:
            (folder / "weights.bin").write_bytes(data)
        t = onnx.TensorProto(name="W", dims=list(dims), data_type=TP.FLOAT, data_location=onnx.TensorProto.EXTERNAL)
        entries = [("location", location)] + ([("offset", str(offset))] if offset is not None else []) + \
                  ([("length", str(length))] if length is not None else []) + list(extra)
        for k, v in entries:
            e = t.external_data.add()
            e.key, e.value = k, v
        m = make_model([helper.make_node("Add", ["X", "W"], ["Z"], name="add")],
                       [tensor_info("X", TP.FLOAT, [2, 3])], [tensor_info("Z", TP.FLOAT, [2, 3])], [t])
        (folder / "model.onnx").write_bytes(m.SerializeToString())
        return folder

    def add(name, expect, folder, want=None, cli_result=None):
        nonlocal cases
        cases += both("external", name, expect, str(folder / "model.onnx"), w, {"X": X23}, want, cli_result)

    outside = Path(w.raw("outside_secret", weights.tobytes(), ".bin"))
    want_sum = X23 + weights
    ok_summary = r"output Z: float\[2,3\] min -2\.5 max 7\.5"
    add("valid external data (control)", result(), external_model("ext_ok", "weights.bin"), [want_sum], ok_summary)
    sub = external_model("ext_sub", "sub/w.bin", data=None)
    (sub / "sub").mkdir()
    (sub / "sub" / "w.bin").write_bytes(weights.tobytes())
    add("valid external data in a subfolder (control)", result(), sub, [want_sum], ok_summary)
    escape = r"outside|escapes|\.\.|not under|model folder|model directory"
    add("location ../ escaping the model folder", error(escape), external_model("ext_dotdot", "../" + outside.name))
    add("location sub/../../ escaping the model folder", error(escape),
        external_model("ext_dotdot2", "sub/../../" + outside.name))
    add("absolute location", error(escape + "|absolute"), external_model("ext_abs", str(outside)))
    add("absolute location /etc/passwd", error(escape + "|absolute"), external_model("ext_passwd", "/etc/passwd"))
    link = external_model("ext_symlink", "link.bin")
    os.symlink(outside, link / "link.bin")
    add("symlink pointing out of the model folder", error(escape + "|symlink|link"), link)
    zero = external_model("ext_devzero_link", "zero.bin")
    os.symlink("/dev/zero", zero / "zero.bin")
    add("symlink to /dev/zero", error(escape + "|regular|symlink|link"), zero)
    add("absolute location /dev/zero", error(escape + "|absolute|regular"), external_model("ext_devzero", "/dev/zero"))
    fifo = external_model("ext_fifo", "pipe.bin")
    os.mkfifo(fifo / "pipe.bin")
    add("a FIFO as the data file", error(r"regular"), fifo)
    folder_data = external_model("ext_dir", "data")
    (folder_data / "data").mkdir()
    add("a directory as the data file", error(r"regular|directory"), folder_data)
    add("missing data file", error(r"NoSuchFile|no such|not found|cannot open|does not exist"),
        external_model("ext_missing", "nothere.bin", data=None))
    add("empty location", error(r"location"), external_model("ext_empty_loc", ""))
    add("location with a NUL byte", error(r"NUL"), external_model("ext_nul", "weights.bin\0../../etc/passwd"))
    past = r"past|beyond|end of|exceeds|out of range|only \d+ bytes|larger than|too short|bytes"
    add("offset past the end of the file", error(past), external_model("ext_off", "weights.bin", offset=4096))
    add("offset + length past the end", error(past), external_model("ext_offlen", "weights.bin", offset=8, length=24))
    add("length 2^63 - 1 (offset + length overflows)", error(past + "|" + TOO_BIG),
        external_model("ext_lenovf", "weights.bin", offset=8, length=INT64_MAX))
    add("offset 2^64 (not an int64)", error(r"offset"), external_model("ext_off64", "weights.bin", offset=2**64))
    add("negative offset", error(r"offset"), external_model("ext_negoff", "weights.bin", offset=-8))
    add("length shorter than the declared tensor", error(r"length|bytes|size"),
        external_model("ext_short", "weights.bin", length=8))
    add("declared [2^40, 2^40] (product overflows)", error(TOO_BIG + "|" + past),
        external_model("ext_huge", "weights.bin", dims=(2**40, 2**40)))
    add("declared [2^31] with a 24-byte file", error(past + "|" + TOO_BIG),
        external_model("ext_big", "weights.bin", dims=(2**31,)))
    return cases


# ---- family 3: absurd shapes and sizes at run time -----------------------------


def family_shapes(w):
    _, TP, helper, _ = onnx_modules()
    cases = []

    def op_case(name, expect, op, inputs, want=None, attrs=None, feed=None, out_type=None, **options):
        """Z = op(X, constants...): X is fed (so nothing folds it away), the
        other inputs are initializers."""
        feed = X23 if feed is None else feed
        names = ["X"] + [f"c{i}" for i in range(len(inputs))]
        inits = [const(n, v) for n, v in zip(names[1:], inputs)]
        elem = {np.dtype(np.float32): TP.FLOAT, np.dtype(np.int64): TP.INT64, np.dtype(np.int32): TP.INT32,
                np.dtype(object): TP.STRING}[feed.dtype]
        node = helper.make_node(op, names, ["Z"], name=f"the_{op.lower()}", **(attrs or {}))
        out = tensor_info("Z", out_type if out_type is not None else elem, None)
        m = make_model([node], [tensor_info("X", elem, list(feed.shape))], [out], inits)
        return py_case("shapes", name, expect, w.model(op.lower(), m), w, {"X": feed},
                       [want] if want is not None else None, **options)

    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    # A size that cannot be met is refused, and the message says which node
    # asked for it.
    def big(op):
        return error((TOO_BIG, f"'the_{op.lower()}'"))

    reshape = error(r"cannot reshape|" + TOO_BIG)
    cases += [
        op_case("Reshape to [2^40, 2^40]", reshape, "Reshape", [i64(2**40, 2**40)]),
        op_case("Reshape to [2^62, -1]", reshape, "Reshape", [i64(2**62, -1)]),
        op_case("Reshape to [-1, -1]", error(r"-1|shape"), "Reshape", [i64(-1, -1)]),
        op_case("Reshape to [7]", error(r"shape|7"), "Reshape", [i64(7)]),
        op_case("Expand to [2^31, 2^31]", big("Expand"), "Expand", [i64(2**31, 2**31)], feed=np.ones((1, 1), np.float32)),
        op_case("Expand to [2^62, 4]", big("Expand"), "Expand", [i64(2**62, 4)], feed=np.ones((1, 1), np.float32)),
        op_case("Expand to [-1, 3]", error(r"-1|negative|shape|broadcast"), "Expand", [i64(-1, 3)]),
        op_case("Tile by [2^40, 2^40]", big("Tile"), "Tile", [i64(2**40, 2**40)]),
        op_case("Tile by [2^62, 4]", big("Tile"), "Tile", [i64(2**62, 4)]),
        op_case("Tile by [-1, 1]", error(r"repeat|negative|-1"), "Tile", [i64(-1, 1)]),
        op_case("Pad by 2^62", big("Pad"), "Pad", [i64(0, 2**62, 0, 0)]),
        op_case("Pad by INT64_MAX on both sides", big("Pad"), "Pad", [i64(0, INT64_MAX, 0, INT64_MAX)]),
        op_case("Pad by -5 on a dim of 3", error(r"pad|negative|shape"), "Pad", [i64(0, -5, 0, 0)]),
        op_case("Gather index 5 of 2", error(r"index|indices|range|bound"), "Gather", [i64(5)]),
        op_case("Gather index INT64_MIN", error(r"index|indices|range|bound"), "Gather", [i64(INT64_MIN)]),
        op_case("Gather index -3 of 2", error(r"index|indices|range|bound"), "Gather", [i64(-3)]),
        op_case("Transpose perm [0, 0]", error(r"perm"), "Transpose", [], attrs={"perm": [0, 0]}),
        op_case("Transpose perm [0, 5]", error(r"perm"), "Transpose", [], attrs={"perm": [0, 5]}),
        op_case("Concat axis 5", error(r"axis"), "Concat", [], attrs={"axis": 5}),
        op_case("Flatten axis 99", error(r"axis"), "Flatten", [], attrs={"axis": 99}),
        op_case("Unsqueeze axis 99", error(r"axis|axes"), "Unsqueeze", [i64(99)]),
        op_case("Squeeze a dim of 3", error(r"axis|axes|squeeze|dim"), "Squeeze", [i64(1)]),
        op_case("OneHot depth 2^40", big("OneHot"), "OneHot", [i64(2**40), np.array([0, 1], np.float32)],
                feed=np.array([0, 1], np.int64), out_type=TP.FLOAT),
    ]
    # ConstantOfShape: its one input is the shape.
    for name, shape, expect, want in [
        ("ConstantOfShape [2^40]", [2**40], error((TOO_BIG, "'cos'")), None),
        ("ConstantOfShape [2^32, 2^32]", [2**32, 2**32], error((TOO_BIG, "'cos'")), None),
        ("ConstantOfShape [-5]", [-5], error(r"negative|-5|shape"), None),
        ("ConstantOfShape [3, 0] (empty)", [3, 0], result(), np.zeros((3, 0), np.float32)),
    ]:
        m = make_model([helper.make_node("ConstantOfShape", ["S"], ["Z"], name="cos")],
                       [tensor_info("S", TP.INT64, [len(shape)])], [tensor_info("Z", TP.FLOAT, None)])
        cases.append(py_case("shapes", name, expect, w.model("cos", m), w, {"S": i64(*shape)},
                             [want] if want is not None else None))
    # Two-output ops.
    for name, op, extra, attrs, pattern in [
        ("Split [1, 1] of a dim of 3", "Split", i64(1, 1), {"axis": 1}, r"split.*(sum|add up|3)"),
        ("Split [4, -1] of a dim of 3", "Split", i64(4, -1), {"axis": 1}, r"split"),
        ("TopK k = 2^40", "TopK", i64(2**40), {}, r"\bk\b"),
        ("TopK k = -1", "TopK", i64(-1), {}, r"\bk\b"),
    ]:
        m = make_model([helper.make_node(op, ["X", "c"], ["Z", "Z2"], name=op.lower(), **attrs)],
                       [tensor_info("X", TP.FLOAT, [2, 3])],
                       [tensor_info("Z", TP.FLOAT, None), tensor_info("Z2", TP.INT64 if op == "TopK" else TP.FLOAT, None)],
                       [const("c", extra)])
        cases.append(py_case("shapes", name, error(pattern), w.model(op.lower(), m), w, {"X": X23}))
    # Resize (opset 13+): X, roi, scales, sizes.
    x4 = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    for name, scales, sizes, expect in [
        ("Resize scales 1e10", [1, 1, 1e10, 1e10], None, error((TOO_BIG, "'resize'"))),
        ("Resize scales NaN", [1, 1, np.nan, 1], None, error(r"scale|nan")),
        ("Resize scales inf", [1, 1, np.inf, 1], None, error(r"scale|inf|" + TOO_BIG)),
        ("Resize scales -1", [1, 1, -1, 1], None, error(r"scale|negative")),
        ("Resize sizes [1, 1, 2^40, 2^40]", None, [1, 1, 2**40, 2**40], error((TOO_BIG, "'resize'"))),
    ]:
        inputs = ["X", "", "scales" if scales else "", "sizes" if sizes else ""]
        while inputs[-1] == "":
            inputs.pop()
        inits = ([const("scales", np.array(scales, np.float32))] if scales else []) + \
                ([const("sizes", np.array(sizes, np.int64))] if sizes else [])
        m = make_model([helper.make_node("Resize", inputs, ["Z"], name="resize")],
                       [tensor_info("X", TP.FLOAT, [1, 1, 2, 2])], [tensor_info("Z", TP.FLOAT, None)], inits)
        cases.append(py_case("shapes", name, expect, w.model("resize", m), w, {"X": x4}))
    # Conv and pooling attributes that would divide by zero or make a
    # negative output size.
    xc = np.ones((1, 1, 4, 4), np.float32)
    wc = np.ones((1, 1, 2, 2), np.float32)
    for name, op, attrs, pattern in [
        ("Conv strides [0, 0]", "Conv", {"strides": [0, 0]}, r"stride"),
        ("Conv dilations [0, 0]", "Conv", {"dilations": [0, 0]}, r"dilation"),
        ("Conv kernel larger than the input", "Conv", {"kernel_shape": [9, 9]}, r"kernel|window|larger than"),
        ("MaxPool kernel_shape [0, 0]", "MaxPool", {"kernel_shape": [0, 0]}, r"kernel"),
        ("MaxPool strides [0, 0]", "MaxPool", {"kernel_shape": [2, 2], "strides": [0, 0]}, r"stride"),
        ("MaxPool pads [-5, ...]", "MaxPool", {"kernel_shape": [2, 2], "pads": [-5, 0, 0, 0]}, r"pad"),
    ]:
        ins = ["X", "W"] if op == "Conv" else ["X"]
        m = make_model([helper.make_node(op, ins, ["Z"], name=op.lower(), **attrs)],
                       [tensor_info("X", TP.FLOAT, [1, 1, 4, 4])], [tensor_info("Z", TP.FLOAT, None)],
                       [const("W", wc)] if op == "Conv" else [])
        cases.append(py_case("shapes", name, error(pattern), w.model(op.lower(), m), w, {"X": xc}))
    cases += slice_cases(w, op_case)
    cases += range_cases(w)
    cases += arithmetic_cases(w, op_case)
    cases += nan_cases(w)
    return cases


def slice_cases(w, op_case):
    cases = []
    data = np.arange(10, dtype=np.int64)
    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    # The expected values are Python's own slicing of a list, which clamps
    # out-of-range bounds exactly as ONNX's Slice does.
    for start, end, step in [(0, INT64_MAX, 1), (INT64_MIN, INT64_MAX, 1), (INT64_MAX, INT64_MIN, -1),
                             (-1, INT64_MIN, -1), (0, INT64_MAX, INT64_MAX), (INT64_MAX, INT64_MIN, INT64_MIN),
                             (INT64_MIN, INT64_MIN, 1), (5, INT64_MAX, 3), (-INT64_MAX, -3, 2), (INT64_MAX, 0, -3),
                             (INT64_MIN, INT64_MAX, INT64_MAX), (INT64_MAX, INT64_MAX, -1)]:
        want = np.array(list(range(10))[start:end:step], dtype=np.int64)
        cases.append(op_case(f"Slice [{start}:{end}:{step}]", result(), "Slice",
                             [i64(start), i64(end), i64(0), i64(step)], want, feed=data))
    cases.append(op_case("Slice step 0", error(r"step"), "Slice", [i64(0), i64(5), i64(0), i64(0)], feed=data))
    cases.append(op_case("Slice axis 5 of a 1-d tensor", error(r"ax"), "Slice",
                         [i64(0), i64(5), i64(5), i64(1)], feed=data))
    cases.append(op_case("Slice axes [0, 0]", error(r"ax|duplicate|repeat"), "Slice",
                         [i64(0, 1), i64(5, 6), i64(0, 0), i64(1, 1)], feed=data))
    return cases


def range_cases(w):
    _, TP, helper, _ = onnx_modules()
    cases = []

    def range_case(name, start, limit, delta, dtype, expect):
        elem = {np.int64: TP.INT64, np.int32: TP.INT32, np.float32: TP.FLOAT}[dtype]
        m = make_model([helper.make_node("Range", ["S", "L", "D"], ["Z"], name="range")],
                       [tensor_info(n, elem, []) for n in "SLD"], [tensor_info("Z", elem, None)])
        feeds = {"S": np.array(start, dtype), "L": np.array(limit, dtype), "D": np.array(delta, dtype)}
        want = None
        if expect.result:
            # Python integers do not overflow: the reference count and values.
            n = max(-((limit - start) // -delta), 0)
            want = [np.array([start + i * delta for i in range(n)], dtype)]
        cases.append(py_case("shapes", name, expect, w.model("range", m), w, feeds, want))

    too_many = error((TOO_BIG + r"|elements", "'range'"))
    for s, l, d in [(INT64_MAX - 5, INT64_MAX, 1), (INT64_MIN, INT64_MIN + 3, 1), (INT64_MAX, INT64_MAX - 10, -3),
                    (INT64_MIN + 10, INT64_MIN, -4), (INT64_MAX - 1, INT64_MIN, -(2**62)), (INT64_MIN, INT64_MAX, 2**62)]:
        range_case(f"Range({s}, {l}, {d}) int64", s, l, d, np.int64, result())
    range_case("Range(2^31-3, 2^31-1, 1) int32", INT32_MAX - 2, INT32_MAX, 1, np.int32, result())
    range_case("Range(INT32_MIN, INT32_MAX, 2^30) int32", INT32_MIN, INT32_MAX, 2**30, np.int32, result())
    range_case("Range(0, INT64_MAX, 1) (too many elements)", 0, INT64_MAX, 1, np.int64, too_many)
    range_case("Range(INT64_MIN, INT64_MAX, 1) (too many elements)", INT64_MIN, INT64_MAX, 1, np.int64, too_many)
    range_case("Range(0, 10, 0) (delta 0)", 0, 10, 0, np.int64, error(r"delta|zero"))
    range_case("Range(0, inf, 1) float", 0, np.inf, 1, np.float32, error(r"finite|inf|" + TOO_BIG))
    range_case("Range(0, 1, NaN) float", 0, 1, np.nan, np.float32, error(r"nan|finite|delta"))
    range_case("Range(0, 1e30, 1) float (too many elements)", 0, 1e30, 1, np.float32, too_many)
    return cases


def arithmetic_cases(w, op_case):
    _, TP, _, _ = onnx_modules()
    cases = []
    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    i32 = lambda *v: np.array(v, dtype=np.int32)  # noqa: E731

    def wrap(op, a, b):
        with np.errstate(all="ignore"):
            return {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}[op](a, b)

    for op, a, b in [("Add", i64(INT64_MAX, INT64_MIN), i64(1, -1)), ("Sub", i64(INT64_MIN, INT64_MAX), i64(1, -1)),
                     ("Mul", i64(2**62, 3037000500, INT64_MIN), i64(4, 3037000500, -1)),
                     ("Add", i32(INT32_MAX, INT32_MIN), i32(1, -1)), ("Mul", i32(65536, INT32_MIN), i32(65536, -1))]:
        cases.append(op_case(f"{op} {a.dtype} wraps like numpy: {a.tolist()} {op} {b.tolist()}", result(), op, [b],
                             wrap(op, a, b), feed=a))
    for op, a in [("Neg", i64(INT64_MIN, 5)), ("Abs", i64(INT64_MIN, -5))]:
        with np.errstate(all="ignore"):
            want = np.negative(a) if op == "Neg" else np.abs(a)
        cases.append(op_case(f"{op} of INT64_MIN wraps like numpy", result(), op, [], want, feed=a))
    # Integer division: INT64_MIN / -1 and x / 0 trap on x86 (SIGFPE); an
    # error or numpy's wrapped value are both acceptable, a signal is not.
    cases.append(op_case("Div INT64_MIN / -1", Expect(error=r"overflow|divi", result=True), "Div", [i64(-1)],
                         i64(INT64_MIN), feed=i64(INT64_MIN)))
    cases.append(op_case("Div int64 by zero", Expect(error=r"zero|divi", result=True), "Div", [i64(0)],
                         i64(0), feed=i64(7)))
    cases.append(op_case("Mod int64 by zero", Expect(error=r"zero|divi|mod", result=True), "Mod", [i64(0)],
                         i64(0), feed=i64(7)))
    # Cast.
    strings = lambda *v: np.array(v, dtype=object)  # noqa: E731
    cast_float = {"to": TP.FLOAT}
    cases.append(op_case('Cast "abc" to float', error(r"abc"), "Cast", [], attrs=cast_float,
                         feed=strings("1.5", "abc"), out_type=TP.FLOAT))
    cases.append(op_case('Cast "12abc" to float', error(r"12abc"), "Cast", [], attrs=cast_float,
                         feed=strings("12abc"), out_type=TP.FLOAT))
    cases.append(op_case('Cast "" to float', error(r"empty|''|\"\"|string"), "Cast", [], attrs=cast_float,
                         feed=strings(""), out_type=TP.FLOAT))
    cases.append(op_case('Cast "1.5", "-2", "1e3" to float', result(), "Cast", [], np.array([1.5, -2, 1000], np.float32),
                         attrs=cast_float, feed=strings("1.5", "-2", "1e3"), out_type=TP.FLOAT))
    cases.append(op_case("Cast int64 300 to int8 wraps like numpy", result(), "Cast", [], i64(300, -129).astype(np.int8),
                         attrs={"to": TP.INT8}, feed=i64(300, -129), out_type=TP.INT8))
    cases.append(op_case("Cast float 1.9, -1.9 to int32 truncates", result(), "Cast", [], i32(1, -1),
                         attrs={"to": TP.INT32}, feed=np.array([1.9, -1.9], np.float32), out_type=TP.INT32))
    # Out of range float -> int is undefined in C++ and in the ONNX spec; the
    # Cast kernel defines it as x86's cvtt instructions do (the "integer
    # indefinite" INT_MIN), which is what numpy and onnxruntime give on x86.
    # An error would do too; a value that depends on the compiler would not.
    cases.append(op_case("Cast float 3e9 to int32", Expect(error=r"range|overflow|3e\+?0?9|int32", result=True),
                         "Cast", [], i32(INT32_MIN), attrs={"to": TP.INT32}, feed=np.array([3e9], np.float32),
                         out_type=TP.INT32))
    cases.append(op_case("Cast float NaN to int64", Expect(error=r"nan|range", result=True), "Cast", [], i64(INT64_MIN),
                         attrs={"to": TP.INT64}, feed=np.array([np.nan], np.float32), out_type=TP.INT64))
    return cases


def conv2d(x, w, b, pad):
    """Reference Conv (NCHW, stride 1) in float64, NaN propagating."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    m, _, kh, kw = w.shape
    out = np.zeros((n, m, h - kh + 1, wd - kw + 1))
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            patch = x[:, :, i:i + kh, j:j + kw]
            out[:, :, i, j] = np.tensordot(patch, w.astype(np.float64), axes=([1, 2, 3], [1, 2, 3]))
    return out + b.reshape(1, -1, 1, 1)


def nan_cases(w):
    _, TP, helper, _ = onnx_modules()
    cases = []
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    x[0, 0, 1, 1] = np.nan
    x[0, 1, 4, 3] = np.nan
    wts = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    conv = conv2d(x, wts, bias, 1)
    levels = ("ORT_DISABLE_ALL", "ORT_ENABLE_BASIC", "ORT_ENABLE_EXTENDED", "ORT_ENABLE_ALL")

    def conv_model(epilogue, weights=wts):
        nodes = [helper.make_node("Conv", ["X", "W", "B"], ["C"], name="conv", pads=[1, 1, 1, 1])] + epilogue
        return make_model(nodes, [tensor_info("X", TP.FLOAT, [1, 2, 6, 6])], [tensor_info("Z", TP.FLOAT, None)],
                          [const("W", weights), const("B", bias)])

    relu = w.model("conv_relu", conv_model([helper.make_node("Relu", ["C"], ["Z"], name="relu")]))
    for level in levels:
        cases.append(py_case("shapes", f"NaN through Conv+Relu at {level}", result(), relu, w, {"X": x},
                             [np.maximum(conv, 0).astype(np.float32)], opt_level=level))
    clip = w.model("conv_clip", make_model(
        [helper.make_node("Conv", ["X", "W", "B"], ["C"], name="conv", pads=[1, 1, 1, 1]),
         helper.make_node("Clip", ["C", "lo", "hi"], ["Z"], name="clip")],
        [tensor_info("X", TP.FLOAT, [1, 2, 6, 6])], [tensor_info("Z", TP.FLOAT, None)],
        [const("W", wts), const("B", bias), const("lo", np.float32(0)), const("hi", np.float32(6))]))
    nan_w = wts.copy()
    nan_w[1, 0, 0, 0] = np.nan
    relu_nan_w = w.model("conv_relu_nanw", conv_model([helper.make_node("Relu", ["C"], ["Z"], name="relu")], nan_w))
    for level in ("ORT_DISABLE_ALL", "ORT_ENABLE_ALL"):
        cases.append(py_case("shapes", f"NaN through Conv+Clip(0, 6) at {level}", result(), clip, w, {"X": x},
                             [np.clip(conv, 0, 6).astype(np.float32)], opt_level=level))
        finite_x = np.nan_to_num(x)
        cases.append(py_case("shapes", f"NaN weight through Conv+Relu at {level}", result(), relu_nan_w, w,
                             {"X": finite_x},
                             [np.maximum(conv2d(finite_x, nan_w, bias, 1), 0).astype(np.float32)], opt_level=level))
    a = rng.standard_normal((4, 5)).astype(np.float32)
    a[2, 3] = np.nan
    b = rng.standard_normal((5, 3)).astype(np.float32)
    c = rng.standard_normal(3).astype(np.float32)
    ref = np.maximum(a.astype(np.float64) @ b + c, 0).astype(np.float32)
    gemm = w.model("gemm_relu", make_model(
        [helper.make_node("Gemm", ["A", "B", "C"], ["G"], name="gemm"), helper.make_node("Relu", ["G"], ["Z"], name="relu")],
        [tensor_info("A", TP.FLOAT, [4, 5])], [tensor_info("Z", TP.FLOAT, None)], [const("B", b), const("C", c)]))
    matmul = w.model("matmul_add_relu", make_model(
        [helper.make_node("MatMul", ["A", "B"], ["M"], name="matmul"), helper.make_node("Add", ["M", "C"], ["G"], name="add"),
         helper.make_node("Relu", ["G"], ["Z"], name="relu")],
        [tensor_info("A", TP.FLOAT, [4, 5])], [tensor_info("Z", TP.FLOAT, None)], [const("B", b), const("C", c)]))
    for level in ("ORT_DISABLE_ALL", "ORT_ENABLE_ALL"):
        cases.append(py_case("shapes", f"NaN through Gemm+Relu at {level}", result(), gemm, w, {"A": a}, [ref],
                             opt_level=level))
        cases.append(py_case("shapes", f"NaN through MatMul+Add+Relu at {level}", result(), matmul, w, {"A": a}, [ref],
                             opt_level=level))
    return cases


# ---- family 4: special files ---------------------------------------------------


def family_special(w):
    cases = []
    root = w.folder("special")
    fifo = root / "fifo.onnx"
    os.mkfifo(fifo)
    sock_path = root / "socket.onnx"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(sock_path))  # the socket file stays after close
    sock.close()
    loop = root / "loop.onnx"
    os.symlink(loop, loop)
    folder = root / "folder.onnx"
    folder.mkdir()
    sparse = root / "sparse.onnx"
    with open(sparse, "wb") as f:
        f.truncate(64 << 30)  # 64 GiB of holes: no disk used, far past the address-space cap
    regular = r"regular"
    paths = [
        ("a FIFO", str(fifo), regular),
        ("/dev/zero", "/dev/zero", regular),
        ("a directory", str(folder), regular + "|directory"),
        ("a socket", str(sock_path), regular + "|socket|no such device"),
        ("a symlink loop", str(loop), r"loop|too many levels|symbolic links|NoSuchFile"),
        ("a missing file", str(root / "missing.onnx"), r"NoSuchFile|no such file|not found|does not exist"),
        ("a 64 GiB sparse file", str(sparse), TOO_BIG + r"|2 ?GiB|cannot map|protobuf"),
        ("/proc/self/status", "/proc/self/status", r"regular|protobuf|parse|graph|empty"),
    ]
    for name, path, pattern in paths:
        cases.append(cli_case("special", f"{name} as the model (CLI run)", error(pattern), ["run", path]))
        cases.append(cli_case("special", f"{name} as the model (CLI inspect)", error(pattern), ["inspect", path]))
        cases.append(Case("special", f"{name} as the model (Python)", error(pattern), func="child_open",
                          params={"path": path}))
    cases.append(Case("special", "a path with a NUL byte as the model (Python)", error(r"NUL|null|embedded"),
                      func="child_open", params={"path": str(root / "a.onnx") + "\0/etc/passwd"}))
    # --input: the same special files, and malformed .npy files.
    model = w.model("add", add_model())
    y = f"Y={w.array('y', Y23)}"
    header = b"\x93NUMPY\x01\x00"

    def npy_with_header(text):
        text = text.ljust(117) + "\n"
        return header + len(text).to_bytes(2, "little") + text.encode()

    bad_npy = [
        ("a truncated .npy", w.raw("trunc", _npy_bytes(X23)[:-10], ".npy"), r"npy|short|truncat|bytes|data"),
        ("a .npy declaring shape (2^40, 2^40)", w.raw("hugenpy", npy_with_header(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }"), ".npy"),
         TOO_BIG + r"|npy|shape|bytes|data"),
        ("a .npy declaring shape (-1, 3)", w.raw("negnpy", npy_with_header(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3), }"), ".npy"), r"npy|shape|negative"),
        ("a .npy with a garbage header", w.raw("garbage", header + b"\xff\xff" + b"x" * 64, ".npy"),
         r"npy|header"),
        ("a .npy of float64 for a float input", w.array("f64", X23.astype(np.float64)), r"double|float64|type|f8"),
        ("a .npy of shape (3, 2) for a [2,3] input", w.array("shape32", X23.reshape(3, 2)), r"shape|\[3,2\]|dim"),
        ("a .npy of pickled objects", w.array("objects", np.array([{"a": 1}], dtype=object)),
         r"npy|object|type|pickle|descr|\|O"),
    ]
    for name, path, pattern in [(n, p, pat) for n, p, pat in paths if "sparse" not in n and "proc" not in n] + bad_npy:
        cases.append(cli_case("special", f"{name} as --input (CLI run)", error(pattern),
                              ["run", model, "--input", f"X={path}", "--input", y]))
    return cases + output_files(w)


def output_files(w):
    """--save-outputs and --save-optimized: where the files go, and what
    they are written into."""
    _, TP, helper, _ = onnx_modules()
    cases = []
    model = w.model("add", add_model())
    y = ["--input", f"X={w.array('x', X23)}", "--input", f"Y={w.array('y', Y23)}"]
    fifo_dir = w.folder("fifo_out")
    os.mkfifo(fifo_dir / "Z.npy")
    regular_w = r"not a regular file; only regular files are written"
    cases.append(cli_case("special", "--save-outputs where NAME.npy is a FIFO", error(regular_w),
                          ["run", model, "--save-outputs", fifo_dir] + y))
    dir_dir = w.folder("dir_out")
    (dir_dir / "Z.npy").mkdir()
    cases.append(cli_case("special", "--save-outputs where NAME.npy is a folder", error(r"directory"),
                          ["run", model, "--save-outputs", dir_dir] + y))
    fifo_model = w.folder("fifo_opt") / "opt.onnx"
    os.mkfifo(fifo_model)
    cases.append(cli_case("special", "--save-optimized to a FIFO", error(regular_w),
                          ["run", model, "--save-optimized", fifo_model] + y))
    cases.append(cli_case("special", "--save-optimized to /dev/zero", error(regular_w),
                          ["run", model, "--save-optimized", "/dev/zero"] + y))
    # Output names that are paths: the files stay inside the folder.
    for stem, names, expect in [
        ("escape", ["../escape", "/tmp/abs_escape", ".hidden"], result()),
        ("collide", ["a/b", "a_b"], error(r"would both be saved as a_b\.npy")),
    ]:
        nodes = [helper.make_node("Identity", ["X"], [n], name=f"id{i}") for i, n in enumerate(names)]
        m = make_model(nodes, [tensor_info("X", TP.FLOAT, [2, 3])], [tensor_info(n, TP.FLOAT, [2, 3]) for n in names])
        cases.append(Case("special", f"--save-outputs with output names {names}", expect, func="child_save_outputs",
                          params={"switchyard": str(w.build / "switchyard"), "model": w.model(stem, m),
                                  "folder": str(w.folder(stem + "_out") / "out"), "names": names}))
    return cases


def _npy_bytes(array):
    import io

    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


# ---- family 5: bad CLI arguments ---------------------------------------------------


def family_cli(w):
    cases = []
    model = str(DIGITS)
    ranges = {"--runs": "1 to 10000000", "--warmup": "0 to 1000000", "--seconds": "0 to 86400",
              "--batch": "1 to 2147483648", "--seed": "0 to 4294967295", "--threads": "0 to 1024",
              "--max-partitions": "0 to 1000000", "--min-partition-size": "0 to 1000000", "--max-copies": "-1 to 1000000"}
    # Every numeric flag of bench with each kind of bad value; run, inspect
    # and doctor share the parser, so their own flags and a sample suffice.
    commands = {"bench": (["--runs", "--warmup", "--seconds", "--batch", "--seed", "--threads", "--dim"],
                          ["abc", "-5", "99999999999999999999", ""]),
                "run": (["--runs", "--max-partitions", "--min-partition-size", "--max-copies"],
                        ["abc", "-5", "99999999999999999999", ""]),
                "inspect": (["--threads", "--max-copies"], ["abc"]), "doctor": (["--threads", "--min-partition-size"], ["1x"])}
    for cmd, (flags, values) in commands.items():
        for flag in flags:
            for value in values:
                if flag == "--dim":
                    arg, what = f"batch={value}", "--dim batch"
                    accepted = "0 to 2147483648"
                else:
                    arg, what, accepted = value, flag, ranges[flag]
                pattern = re.escape(f"{what} must be ") + r"an? (integer|number) from " + re.escape(accepted) + \
                    re.escape(f"; got '{value}'")
                cases.append(cli_case("cli", f"{cmd} {what} {value!r}", error(pattern), [cmd, model, flag, arg]))
    for value in ("nan", "inf", "1e999"):
        cases.append(cli_case("cli", f"bench --seconds {value}",
                              error(re.escape(f"--seconds must be a number from 0 to 86400; got '{value}'")),
                              ["bench", model, "--seconds", value]))
    providers = r"--providers takes a comma-separated list of provider names with no empty item"
    for cmd, value in (("run", ""), ("run", "cpu,,cuda"), ("run", ","), ("bench", ""), ("inspect", ""), ("doctor", "cpu,")):
        cases.append(cli_case("cli", f"{cmd} --providers {value!r}", error(providers), [cmd, model, "--providers", value]))
    for cmd in ("run", "doctor"):
        cases.append(cli_case("cli", f"{cmd} unknown flag --bogus", error(r"unknown option --bogus; accepted:"),
                              [cmd, model, "--bogus"]))
    for cmd in ("bench", "inspect"):
        cases.append(cli_case("cli", f"{cmd} --strict=0", error(r"--strict takes no value"), [cmd, model, "--strict=0"]))
    for cmd, flag in (("run", "--runs"), ("bench", "--seconds"), ("run", "--input"), ("bench", "--dim")):
        cases.append(cli_case("cli", f"{cmd} {flag} with no value", error(re.escape(flag) + " needs a value"),
                              [cmd, model, flag]))
    cases.append(cli_case("cli", "unknown command", error(r"unknown command 'frobnicate'"), ["frobnicate"]))
    cases.append(cli_case("cli", "run with no model", error(r"usage: switchyard run"), ["run"]))
    cases.append(cli_case("cli", "--input for an unknown input name", error(r"--input nope: the model has no input"),
                          ["run", model, "--input", f"nope={w.array('x', X23)}"]))
    cases.append(cli_case("cli", "--dim for a symbol no input has", error(r"--dim batchh: no input of the model has"),
                          ["run", model, "--dim", "batchh=8"]))
    for cmd, flag, a, b in (("run", "--runs", "5", "7"), ("bench", "--seconds", "1", "2"),
                            ("doctor", "--providers", "cpu", "cuda")):
        cases.append(cli_case("cli", f"{cmd} {flag} given twice", error(re.escape(f"{flag} is given twice ('{a}' and '{b}')")),
                              [cmd, model, flag, a, flag, b]))
    cases.append(cli_case("cli", "--dim with no '='", error(r"--dim takes SYMBOL=VALUE"), ["run", model, "--dim", "5"]))
    cases.append(cli_case("cli", "--io-binding cuda:-1", error(r"expected cpu, cuda or cuda:N"),
                          ["bench", model, "--io-binding", "cuda:-1"]))
    # In range, but more memory than there is: refused when allocated
    # (under this runner's 4 GiB cap), not a machine driven into swap.
    cases.append(cli_case("cli", "run --dim batch=2^31 (512 GiB of input)", error(TOO_BIG),
                          ["run", model, "--dim", "batch=2147483648"]))
    cases.append(cli_case("cli", "bench --batch 2^31 (512 GiB of input)", error(TOO_BIG),
                          ["bench", model, "--batch", "2147483648"]))
    # The edges of the ranges run.
    cases.append(cli_case("cli", "bench at the edges of the ranges", result(r'"batch":2,"runs":1,'),
                          ["bench", model, "--runs", "1", "--warmup", "0", "--batch", "2", "--seed", "4294967295",
                           "--threads", "1", "--max-copies", "-1", "--json"]))
    return cases


# ---- family 6: bad Python feeds ------------------------------------------------------


def family_feeds(w):
    _, TP, helper, _ = onnx_modules()
    cases = []
    model = w.model("add", add_model())
    bool_model = w.model("not", make_model([helper.make_node("Not", ["B"], ["Z"], name="not")],
                                           [tensor_info("B", TP.BOOL, [3])], [tensor_info("Z", TP.BOOL, [3])]))
    invalid = r"InvalidArgument|invalid"
    feeds = [
        ("float64 for a float input", error(r"double|float64"), "float64"),
        ("int32 for a float input", error(r"int32"), "int32"),
        ("float16 for a float input", error(r"float16|half"), "float16"),
        ("rank 1 for a [2,3] input", error(r"rank|shape|\[6\]"), "rank1"),
        ("rank 3 for a [2,3] input", error(r"rank|shape|\[2,3,1\]"), "rank3"),
        ("shape [3,2] for a [2,3] input", error(r"shape|\[3,2\]"), "shape32"),
        ("shape [0,3] for a [2,3] input", error(r"shape|\[0,3\]"), "empty"),
        ("a scalar for a [2,3] input", error(r"shape|rank|scalar|\[\]"), "scalar"),
        ("an unknown input name", error(r"nope"), "unknown_name"),
        ("a missing input", error(r"MissingInput|'Y'"), "missing"),
        ("None as a feed", error(invalid + r"|TypeError|None"), "none"),
        ("an object array", error(invalid + r"|TypeError|object"), "object"),
        ("a string array", error(r"string|type|<U"), "unicode"),
        ("a list of feeds instead of a dict", error(r"TypeError|dict"), "list_feed"),
        ("an unknown output name", error(r"nope"), "unknown_output"),
        ("a non-contiguous view", result(), "strided"),
        ("a Fortran-ordered array", result(), "fortran"),
        ("a reversed (negative-stride) view", result(), "reversed"),
        ("a broadcast (zero-stride) view", result(), "broadcast"),
    ]
    for name, expect, kind in feeds:
        cases.append(Case("feeds", name, expect, func="child_feed", params={"model": model, "kind": kind}))
    cases.append(Case("feeds", "bool feed with bytes 2 and 255", error(r"bool|0 or 1|0/1"), func="child_feed",
                      params={"model": bool_model, "kind": "bool_bytes"}))
    cases.append(Case("feeds", "bool feed with bytes 0 and 1 (control)", result(), func="child_feed",
                      params={"model": bool_model, "kind": "bool_ok"}))
    threads = r"thread"
    for attr, value in (("intra_op_num_threads", 100000), ("intra_op_num_threads", -1),
                        ("inter_op_num_threads", -1), ("intra_op_num_threads", 2**31)):
        cases.append(Case("feeds", f"{attr}={value}", error(threads + r"|OverflowError|TypeError"), func="child_threads",
                          params={"model": model, "attr": attr, "value": value}))
    for name, kind, pattern in [
        ("IOBinding bind_input with a null pointer", "null_input", r"null|pointer|0x0|buffer"),
        ("IOBinding bind_input of shape [2] for a [2,3] input (short buffer)", "short_input", r"shape|\[2\]"),
        ("IOBinding bind_input of shape [2^40, 2^40]", "huge_input", TOO_BIG + r"|shape"),
        ("IOBinding bind_input of shape [-1, 3]", "negative_input", r"negative|-1|shape"),
        ("IOBinding bind_ortvalue_output of [6] for [2,3] (short buffer)", "short_output", r"shape|\[6\]"),
        ("OrtValue of shape [2^40, 2^40]", "huge_ortvalue", TOO_BIG + r"|shape"),
        ("OrtValue of shape [-1]", "negative_ortvalue", r"negative|-1|shape"),
    ]:
        cases.append(Case("feeds", name, error(pattern), func="child_iobinding", params={"model": model, "kind": kind}))
    cases.append(Case("feeds", "IOBinding bind_output with buffer_ptr 0, a type and a shape",
                      Expect(error=r"null|pointer|buffer", result=True), func="child_iobinding",
                      params={"model": model, "kind": "null_output"}))
    cases.append(Case("feeds", "IOBinding with numpy inputs (control)", result(), func="child_iobinding",
                      params={"model": model, "kind": "control"}))
    return cases


# ---- child side: runs one Python case ----------------------------------------------------


class Mismatch(Exception):
    pass


def same(got, want):
    """Raises Mismatch unless got equals want: dtype, shape, values (NaN in
    the same places; floats to a few ulps)."""
    got = np.asarray(got)
    if got.dtype != want.dtype or got.shape != want.shape:
        raise Mismatch(f"got {got.dtype}{list(got.shape)}, want {want.dtype}{list(want.shape)}")
    if want.dtype.kind == "f":
        ok = np.array_equal(np.isnan(got), np.isnan(want)) and np.allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)
    else:
        ok = np.array_equal(got, want)
    if not ok:
        raise Mismatch(f"got {got.ravel()[:12].tolist()}, want {want.ravel()[:12].tolist()}")


def child_run(model, feeds, want, config=None, opt_level=None):
    import switchyard as ort

    so = ort.SessionOptions()
    for k, v in (config or {}).items():
        so.add_session_config_entry(k, v)
    if opt_level:
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, opt_level)
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    outputs = sess.run(None, {k: np.load(v, allow_pickle=True) for k, v in feeds.items()})
    if want is not None:
        if len(outputs) != len(want):
            raise Mismatch(f"{len(outputs)} outputs, want {len(want)}")
        for got, path in zip(outputs, want):
            same(got, np.load(path))
        print("RESULT-OK")


def child_open(path):
    import switchyard as ort

    ort.InferenceSession(path, providers=["CPUExecutionProvider"])


def child_open_bytes(path):
    import switchyard as ort

    ort.InferenceSession(Path(path).read_bytes(), providers=["CPUExecutionProvider"])


def child_save_outputs(switchyard, model, folder, names):
    """Runs `switchyard run --save-outputs` and checks that every output went
    to one file inside the folder and nothing was written beside it."""
    os.mkdir(folder)
    x = os.path.join(os.path.dirname(folder), "x.npy")
    np.save(x, X23)
    # The folder's parent is this case's own; the other places a name could
    # reach are checked by name (/tmp is shared with other processes).
    escapes = [p for p in (os.path.normpath(folder + "/" + n + ".npy") for n in names)
               if not p.startswith(folder + "/")]
    before = set(os.listdir(os.path.dirname(folder)))
    proc = subprocess.run([switchyard, "run", model, "--input", f"X={x}", "--save-outputs", folder],
                          capture_output=True, text=True)
    print(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        sys.exit(proc.returncode if proc.returncode > 0 else 128 - proc.returncode)
    after = set(os.listdir(os.path.dirname(folder)))
    written = sorted(after - before) + [p for p in escapes if os.path.exists(p)]
    if written:
        raise Mismatch(f"files written outside {folder}: {written}")
    files = sorted(os.listdir(folder))
    if len(files) != len(names) or any(f.startswith(".") or "/" in f for f in files):
        raise Mismatch(f"files in {folder}: {files} for outputs {names}")
    for f in files:
        same(np.load(os.path.join(folder, f)), X23)
    print("RESULT-OK")


def child_feed(model, kind):
    import switchyard as ort

    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    x, y = X23, Y23
    if kind.startswith("bool"):
        b = np.array([2, 0, 255] if kind == "bool_bytes" else [1, 0, 1], np.uint8).view(np.bool_)
        (z,) = sess.run(None, {"B": b})
        same(z, np.array([False, True, False]))
        print("RESULT-OK")
        return
    variants = {
        "float64": {"X": x.astype(np.float64), "Y": y}, "int32": {"X": x.astype(np.int32), "Y": y},
        "float16": {"X": x.astype(np.float16), "Y": y}, "rank1": {"X": x.ravel(), "Y": y},
        "rank3": {"X": x.reshape(2, 3, 1), "Y": y}, "shape32": {"X": x.reshape(3, 2), "Y": y},
        "empty": {"X": np.zeros((0, 3), np.float32), "Y": y}, "scalar": {"X": np.float32(1), "Y": y},
        "unknown_name": {"X": x, "Y": y, "nope": x}, "missing": {"X": x}, "none": {"X": None, "Y": y},
        "object": {"X": np.array([[1.0, "a", None]] * 2, dtype=object), "Y": y},
        "unicode": {"X": np.array([["a", "b", "c"]] * 2), "Y": y}, "list_feed": [x, y],
        "strided": {"X": np.repeat(x, 2, axis=1)[:, ::2], "Y": y}, "fortran": {"X": np.asfortranarray(x), "Y": y},
        "reversed": {"X": x[::-1, ::-1], "Y": y}, "broadcast": {"X": np.broadcast_to(x[:1], (2, 3)), "Y": y},
    }
    if kind == "unknown_output":
        sess.run(["nope"], {"X": x, "Y": y})
        return
    feed = variants[kind]
    outputs = sess.run(None, feed)
    if kind in ("strided", "fortran", "reversed", "broadcast"):
        same(outputs[0], np.ascontiguousarray(feed["X"]) + y)
        print("RESULT-OK")


def child_threads(model, attr, value):
    import switchyard as ort

    so = ort.SessionOptions()
    setattr(so, attr, value)
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    sess.run(None, {"X": X23, "Y": Y23})


def child_iobinding(model, kind):
    import switchyard as ort

    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    if kind == "huge_ortvalue":
        ort.OrtValue.ortvalue_from_shape_and_type([2**40, 2**40], np.float32)
        return
    if kind == "negative_ortvalue":
        ort.OrtValue.ortvalue_from_shape_and_type([-1], np.float32)
        return
    binding = sess.io_binding()
    binding.bind_cpu_input("Y", Y23)
    x = X23.copy()
    ptr = x.ctypes.data
    shapes = {"null_input": ([2, 3], 0), "short_input": ([2], ptr), "huge_input": ([2**40, 2**40], ptr),
              "negative_input": ([-1, 3], ptr)}
    if kind in shapes:
        shape, address = shapes[kind]
        binding.bind_input("X", "cpu", 0, np.float32, shape, address)
    else:
        binding.bind_cpu_input("X", x)
    if kind == "short_output":
        binding.bind_ortvalue_output("Z", ort.OrtValue.ortvalue_from_shape_and_type([6], np.float32))
    elif kind == "null_output":
        # A null pointer with a shape and type: refused, or taken as "no
        # buffer" (the session allocates); never written through.
        binding.bind_output("Z", "cpu", 0, np.float32, [2, 3], 0)
    else:
        binding.bind_output("Z")
    sess.run_with_iobinding(binding)
    same(binding.copy_outputs_to_cpu()[0], x + Y23)
    print("RESULT-OK")


def child_main(func, params):
    try:
        globals()[func](**params)
    except Mismatch as e:
        print(f"WRONG: {e}")
        return 4
    except BaseException as e:  # noqa: B036 - every error is the outcome being classified
        print(f"ERROR {type(e).__name__}: {e}")
        return 3
    return 0


# ---- parent side ------------------------------------------------------------------------


def limit_resources():
    """Runs in the child before exec: the address-space cap, no core files,
    no runaway output files, and a process group of its own for the kill."""
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, 1 << 30))
    os.setsid()


@dataclasses.dataclass
class Outcome:
    case: Case
    outcome: str
    passed: bool
    detail: str
    output: str
    seconds: float


def classify(case, rc, output):
    """(outcome, passed, detail) for a finished child."""
    e = case.expect
    if rc < 0:
        return "crash", False, f"killed by {signal.Signals(-rc).name}"
    if case.via == "py":
        if rc == 4:
            return "wrong", False, "wrong result"
        errored = rc != 0
        got_result = rc == 0 and "RESULT-OK" in output
    else:
        errored = rc != 0
        got_result = rc == 0 and isinstance(e.result, str) and re.search(e.result, output, re.I) is not None
    if errored:
        # A crash the interpreter or a sanitizer reported in words.
        if re.search(r"Segmentation fault|Fatal Python error|AddressSanitizer|core dumped", output):
            return "crash", False, "crashed"
        if e.error is None:
            return "wrong", False, f"an error (exit code {rc}) where the right result was due"
        if re.search(UNCLEAR, output, re.I):
            return "wrong", False, "an error whose message is only a C++ exception's name"
        missed = [p for p in e.error_patterns() if not re.search(p, output, re.I)]
        if missed:
            return "wrong", False, f"an error (exit code {rc}) not matching /{missed[0]}/"
        return "clear error", True, ""
    if got_result and e.result:
        return "right result", True, ""
    if e.error is not None and not e.result:
        return "wrong", False, "success where an error was due"
    return "wrong", False, "not the expected result"


def run_case(case, build, workdir):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(build) / "python") + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    if case.via == "cli":
        cmd = [str(Path(build) / "switchyard")] + case.argv
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", case.func, json.dumps(case.params)]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            cwd=workdir, env=env, preexec_fn=limit_resources)
    try:
        out, _ = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        text = out.decode(errors="replace")
        return Outcome(case, "hang", False, f"no answer in {TIMEOUT_S} s", text, time.monotonic() - start)
    text = out.decode(errors="replace")
    outcome, passed, detail = classify(case, proc.returncode, text)
    return Outcome(case, outcome, passed, detail, text, time.monotonic() - start)


def build_cases(w):
    cases = []
    for family in (family_model, family_external, family_shapes, family_special, family_cli, family_feeds):
        cases += family(w)
    return cases


def print_report(results):
    width = max(len(o) for o in OUTCOMES)
    print(f"\n{'family':<10} {'cases':>5}  " + "  ".join(f"{o:>{width}}" for o in OUTCOMES) + "  failed")
    for family in FAMILIES:
        rows = [r for r in results if r.case.family == family]
        if not rows:
            continue
        counts = [sum(r.outcome == o for r in rows) for o in OUTCOMES]
        failed = sum(not r.passed for r in rows)
        print(f"{family:<10} {len(rows):>5}  " + "  ".join(f"{c:>{width}}" for c in counts) + f"  {failed:>6}")
    totals = [sum(r.outcome == o for r in results) for o in OUTCOMES]
    print(f"{'all':<10} {len(results):>5}  " + "  ".join(f"{c:>{width}}" for c in totals) +
          f"  {sum(not r.passed for r in results):>6}")
    failing = [r for r in results if not r.passed]
    if failing:
        print(f"\nfailing cases ({len(failing)}):")
        for r in failing:
            print(f"\n[{r.case.family}/{r.case.via}] {r.case.name}: {r.outcome.upper()}: {r.detail}")
            print(f"  expected: {r.case.expect.describe()}")
            if r.case.argv is not None:
                print("  command: switchyard " + " ".join(repr(a) if (not a or " " in a) else a for a in r.case.argv))
            tail = r.output.strip().splitlines()[-6:]
            for line in tail:
                print("  | " + line[:300])
    passed = sum(r.passed for r in results)
    print(f"\n{passed} passed, {len(results) - passed} failed")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sys.exit(child_main(sys.argv[2], json.loads(sys.argv[3])))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, help="the build folder (holds switchyard and python/)")
    parser.add_argument("-k", dest="select", default="", help="run only cases whose family/name contains this")
    parser.add_argument("-j", dest="jobs", type=int, default=2, help="cases run at once (default 2)")
    parser.add_argument("--keep", action="store_true", help="keep the folder of generated inputs")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("-v", dest="verbose", action="store_true", help="print every case's outcome and last line")
    args = parser.parse_args()
    build = Path(args.build).resolve()
    if not (build / "switchyard").exists():
        sys.exit(f"no switchyard binary in {build}")
    workdir = tempfile.mkdtemp(prefix="sy_hostile_")
    try:
        cases = [c for c in build_cases(Workdir(workdir, build)) if args.select in f"{c.family}/{c.name}"]
        if args.list:
            for c in cases:
                print(f"{c.family:<9} {c.via:<3} {c.name}  -> {c.expect.describe()}")
            return 0
        print(f"{len(cases)} cases, inputs in {workdir}, timeout {TIMEOUT_S} s, "
              f"address space {ADDRESS_SPACE_BYTES >> 30} GiB per case")
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(lambda c: run_case(c, build, workdir), cases))
        if args.verbose:
            for r in results:
                last = (r.output.strip().splitlines() or [""])[-1][:200]
                print(f"{r.case.family}/{r.case.via} {r.outcome:<12} {r.case.name} | {last}")
        print_report(results)
        return 0 if all(r.passed for r in results) else 1
    finally:
        if args.keep:
            print(f"inputs kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
