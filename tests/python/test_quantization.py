"""switchyard.quantization: onnxruntime's quantize_dynamic / quantize_static.

The quantized models must load and run in Switchyard, stay within
TOLERANCE of the float model's output range, have the op types
onnxruntime's tool writes, and (where Node.js and onnxruntime-node are
installed, as bench/compare installs them) run in ONNX Runtime with the
same results.
"""

import collections
import json
import os
import pathlib
import shutil
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import switchyard
import sy_models
from switchyard.quantization import (
    CalibrationDataReader,
    CalibrationMethod,
    QuantFormat,
    QuantType,
    compute_scale_zp,
    get_qmin_qmax_for_qType,
    quantize_dynamic,
    quantize_static,
)

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
# Largest |quantized - float| allowed, as a fraction of the float output's range.
TOLERANCE = 0.03

MODELS = {
    "mlp": (sy_models.mlp_model, (4, 16)),
    "cnn": (sy_models.small_cnn_model, (2, 3, 12, 12)),
}


class RandomReader(CalibrationDataReader):
    def __init__(self, shape, batches=8, seed=1):
        rng = np.random.default_rng(seed)
        self.feeds = [{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(batches)]
        self.next = 0

    def get_next(self):
        if self.next >= len(self.feeds):
            return None
        self.next += 1
        return self.feeds[self.next - 1]

    def rewind(self):
        self.next = 0


def _sample(shape):
    return np.random.default_rng(5).standard_normal(shape).astype(np.float32)


def _run(path, x):
    return switchyard.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def _histogram(path):
    return collections.Counter(n.op_type for n in onnx.load(str(path)).graph.node)


def _initializer(path, name):
    model = onnx.load(str(path))
    return numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == name))


def _check_accuracy(float_path, quant_path, shape):
    x = _sample(shape)
    ref = _run(float_path, x)
    got = _run(quant_path, x)
    assert got.shape == ref.shape and got.dtype == np.float32
    err = np.abs(got - ref).max() / np.ptp(ref)
    assert err < TOLERANCE, f"{quant_path}: max error {err:.4f} of the output range"
    assert not np.array_equal(got, ref)  # it did quantize
    return err


@pytest.fixture
def float_model(tmp_path, request):
    build, shape = MODELS[request.param]
    return sy_models.save(build(), tmp_path / f"{request.param}.onnx"), shape


# --- the arithmetic ------------------------------------------------------------------------------------------------

def test_integer_ranges():
    assert get_qmin_qmax_for_qType(QuantType.QInt8) == (-128, 127)
    assert get_qmin_qmax_for_qType(QuantType.QInt8, symmetric=True) == (-127, 127)
    assert get_qmin_qmax_for_qType(QuantType.QInt8, reduce_range=True) == (-64, 64)
    assert get_qmin_qmax_for_qType(QuantType.QUInt8) == (0, 255)
    assert get_qmin_qmax_for_qType(QuantType.QUInt8, reduce_range=True) == (0, 127)


def test_scale_and_zero_point_formulas():
    # Asymmetric uint8 over [-1, 3]: scale 4/255, zero point round(1 / (4/255)) = round(63.75) = 64.
    zp, scale = compute_scale_zp(np.float32(-1), np.float32(3), np.uint8(0), np.uint8(255))
    assert scale == np.float32(4 / 255) and zp == 64 and zp.dtype == np.uint8
    # int8 asymmetric: round(-128 + 63.75) = -64.
    zp, scale = compute_scale_zp(np.float32(-1), np.float32(3), np.int8(-128), np.int8(127))
    assert scale == np.float32(4 / 255) and zp == -64 and zp.dtype == np.int8
    # The range is widened to include 0: [2, 6] is quantized as [0, 6].
    zp, scale = compute_scale_zp(np.float32(2), np.float32(6), np.uint8(0), np.uint8(255))
    assert scale == np.float32(6 / 255) and zp == 0
    # Symmetric int8: scale max|r| / 127, zero point 0.
    zp, scale = compute_scale_zp(np.float32(-0.5), np.float32(2.54), np.int8(-127), np.int8(127), symmetric=True)
    assert scale == np.float32(2.54 / 127) and zp == 0
    # An empty range: scale 1.
    zp, scale = compute_scale_zp(np.float32(0), np.float32(0), np.uint8(0), np.uint8(255))
    assert scale == 1 and zp == 0


def _one_matmul(tmp_path, w):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", w.shape[0]])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", w.shape[1]])
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")], "one_matmul", [x], [y],
                              initializer=[numpy_helper.from_array(w, "W")])
    return sy_models.save(sy_models.make_model(graph), tmp_path / "one_matmul.onnx")


def test_hand_checked_weight(tmp_path):
    # max|W| = 127: scale exactly 1, so the rounding shows: 2.5 -> 2 and 1.5 -> 2 (half to even), -0.5 -> 0.
    w = np.array([[127.0, 2.5], [-0.5, 1.5]], np.float32)
    path = _one_matmul(tmp_path, w)
    out = tmp_path / "one_matmul.dyn.onnx"
    quantize_dynamic(path, out)
    assert _initializer(out, "W_scale") == np.float32(1.0)
    zp = _initializer(out, "W_zero_point")
    assert zp.dtype == np.int8 and zp == 0
    np.testing.assert_array_equal(_initializer(out, "W_quantized"), np.array([[127, 2], [0, 2]], np.int8))

    # Per channel (MatMul: one scale per column of B) and reduce_range (int8 in [-64, 64]).
    quantize_dynamic(path, out, per_channel=True, reduce_range=True)
    scale = _initializer(out, "W_scale")
    np.testing.assert_array_equal(scale, np.array([127 / 64, 2.5 / 64], np.float32))
    q = _initializer(out, "W_quantized")
    np.testing.assert_array_equal(q, np.clip(np.rint(w / scale), -128, 127).astype(np.int8))
    assert q.max() == 64

    # uint8 weights are asymmetric: [-0.5, 127] over [0, 255].
    quantize_dynamic(path, out, weight_type=QuantType.QUInt8)
    zp, scale = _initializer(out, "W_zero_point"), _initializer(out, "W_scale")
    assert zp.dtype == np.uint8 and zp == 1 and scale == np.float32(127.5 / 255)


# --- quantize_dynamic ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("float_model", ["mlp"], indirect=True)
@pytest.mark.parametrize("per_channel", [False, True])
def test_dynamic_mlp(tmp_path, float_model, per_channel):
    path, shape = float_model
    out = tmp_path / "mlp.dyn.onnx"
    quantize_dynamic(path, out, per_channel=per_channel)
    onnx.checker.check_model(onnx.load(str(out)))
    ops = _histogram(out)
    assert ops == {"DynamicQuantizeLinear": 2, "MatMulInteger": 2, "Cast": 2, "Mul": 4, "Add": 2, "Relu": 1}
    assert _initializer(out, "W1_scale").shape == ((32,) if per_channel else ())
    _check_accuracy(path, out, shape)


@pytest.mark.parametrize("float_model", ["cnn"], indirect=True)
@pytest.mark.parametrize("weight_type", [QuantType.QInt8, QuantType.QUInt8])
def test_dynamic_cnn(tmp_path, float_model, weight_type):
    path, shape = float_model
    out = tmp_path / "cnn.dyn.onnx"
    quantize_dynamic(path, out, weight_type=weight_type)
    ops = _histogram(out)
    # Gemm is not quantized dynamically (as in onnxruntime); each Conv bias is reshaped and added in float.
    assert ops["ConvInteger"] == 2 and ops["DynamicQuantizeLinear"] == 2 and ops["Reshape"] == 2
    assert ops["Gemm"] == 1 and "Conv" not in ops
    assert _initializer(out, "W1_quantized").dtype == weight_type.numpy_type
    _check_accuracy(path, out, shape)


@pytest.mark.parametrize("float_model", ["mlp"], indirect=True)
def test_dynamic_nodes_to_exclude(tmp_path, float_model):
    path, _ = float_model
    out = tmp_path / "mlp.dyn.onnx"
    quantize_dynamic(path, out, nodes_to_exclude=["fc2"])
    ops = _histogram(out)
    assert ops["MatMulInteger"] == 1 and ops["MatMul"] == 1
    assert "W2" in {t.name for t in onnx.load(str(out)).graph.initializer}


# --- quantize_static -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("float_model", ["mlp"], indirect=True)
@pytest.mark.parametrize("per_channel", [False, True])
def test_static_qdq_mlp(tmp_path, float_model, per_channel):
    path, shape = float_model
    out = tmp_path / "mlp.qdq.onnx"
    quantize_static(path, out, RandomReader(shape), quant_format=QuantFormat.QDQ, per_channel=per_channel)
    model = onnx.load(str(out))
    onnx.checker.check_model(model)
    # Q/DQ on x, h0, h2 (Relu folded into fc1_bias's output), h3, y; DQ on W1, W2, B1, B2.
    assert _histogram(out) == {"QuantizeLinear": 5, "DequantizeLinear": 9, "MatMul": 2, "Add": 2}
    dq_w1 = next(n for n in model.graph.node if n.name == "W1_DequantizeLinear")
    assert [a.i for a in dq_w1.attribute if a.name == "axis"] == ([1] if per_channel else [])
    _check_accuracy(path, out, shape)


@pytest.mark.parametrize("float_model", ["cnn"], indirect=True)
@pytest.mark.parametrize("per_channel", [False, True])
def test_static_qdq_cnn(tmp_path, float_model, per_channel):
    path, shape = float_model
    out = tmp_path / "cnn.qdq.onnx"
    quantize_static(path, out, RandomReader(shape), per_channel=per_channel)
    model = onnx.load(str(out))
    onnx.checker.check_model(model)
    ops = _histogram(out)
    assert ops == {"QuantizeLinear": 6, "DequantizeLinear": 12, "Conv": 2, "GlobalAveragePool": 1, "Flatten": 1,
                   "Gemm": 1}
    producers = {o: n for n in model.graph.node for o in n.output}
    consumers = collections.defaultdict(list)
    for n in model.graph.node:
        for i in n.input:
            consumers[i].append(n)
    for conv in (n for n in model.graph.node if n.op_type == "Conv"):
        # Every input comes from a DequantizeLinear, the output goes to a QuantizeLinear.
        assert [producers[i].op_type for i in conv.input] == ["DequantizeLinear"] * 3
        assert [n.op_type for n in consumers[conv.output[0]]] == ["QuantizeLinear"]
    # conv1 writes the folded Relu's output.
    assert next(n for n in model.graph.node if n.name == "conv1").output[0] == "r1"

    w1 = numpy_helper.to_array(next(t for t in sy_models.small_cnn_model().graph.initializer if t.name == "W1"))
    scale = _initializer(out, "W1_scale")
    if per_channel:
        np.testing.assert_array_equal(scale, (np.abs(w1).reshape(8, -1).max(axis=1) / 127).astype(np.float32))
    else:
        assert scale == np.float32(np.abs(w1).max() / 127)
    w1_q = _initializer(out, "W1_quantized")
    assert w1_q.dtype == np.int8
    np.testing.assert_array_equal(w1_q, np.rint(w1 / scale.reshape(-1, 1, 1, 1)).astype(np.int8))
    np.testing.assert_array_equal(_initializer(out, "W1_zero_point"), np.zeros(scale.shape, np.int8))
    # The bias: int32, scale = input scale * weight scale, zero point 0, on the same axis as the weight.
    b_scale = _initializer(out, "B1_quantized_scale")
    np.testing.assert_array_equal(b_scale, (_initializer(out, "x_scale") * scale).astype(np.float32))
    assert _initializer(out, "B1_quantized").dtype == np.int32
    dq = {n.name: n for n in model.graph.node}
    axis = {name: [a.i for a in dq[name].attribute if a.name == "axis"] for name in
            ("W1_DequantizeLinear", "W3_DequantizeLinear", "B1_DequantizeLinear")}
    # Conv weights per output channel (axis 0); Gemm with transB=1 keeps N on axis 0 of B.
    assert axis == ({"W1_DequantizeLinear": [0], "W3_DequantizeLinear": [0], "B1_DequantizeLinear": [0]}
                    if per_channel else dict.fromkeys(axis, []))
    _check_accuracy(path, out, shape)


@pytest.mark.parametrize("float_model", ["cnn"], indirect=True)
def test_static_activation_ranges_come_from_calibration(tmp_path, float_model):
    path, shape = float_model
    reader = RandomReader(shape)
    out = tmp_path / "cnn.qdq.onnx"
    quantize_static(path, out, reader, activation_type=QuantType.QUInt8)
    data = np.concatenate([f["x"] for f in reader.feeds])
    zp, scale = compute_scale_zp(data.min(), data.max(), np.uint8(0), np.uint8(255))
    assert _initializer(out, "x_scale") == scale
    assert _initializer(out, "x_zero_point") == zp and zp.dtype == np.uint8
    # The folded Relu's output range starts at 0: zero point 0 clamps as Relu did.
    assert _initializer(out, "r1_zero_point") == 0
    _check_accuracy(path, out, shape)


def test_static_unsupported_choices_are_named(tmp_path):
    path = sy_models.save(sy_models.mlp_model(), tmp_path / "mlp.onnx")
    for bad in ("QOperator", 0, None):
        with pytest.raises(TypeError, match="quant_format"):
            quantize_static(path, tmp_path / "q.onnx", RandomReader((4, 16)), quant_format=bad)
    with pytest.raises(NotImplementedError, match="MinMax"):
        quantize_static(path, tmp_path / "q.onnx", RandomReader((4, 16)), calibrate_method=CalibrationMethod.Entropy)
    with pytest.raises(ValueError, match="no feeds"):
        quantize_static(path, tmp_path / "q.onnx", RandomReader((4, 16), batches=0))


# --- quantize_static, QuantFormat.QOperator --------------------------------------------------------------------------

def _conv(rng, name, x, y, c_in, c_out):
    w = (rng.standard_normal((c_out, c_in, 3, 3)) * 0.3).astype(np.float32)
    b = (rng.standard_normal(c_out) * 0.1).astype(np.float32)
    node = helper.make_node("Conv", [x, "W" + name, "B" + name], [y], name="conv" + name, pads=[1, 1, 1, 1])
    return node, [numpy_helper.from_array(w, "W" + name), numpy_helper.from_array(b, "B" + name)]


def _conv_model(residual):
    """x [N,3,8,8] -> Conv -> Relu -> Conv -> MatMul (over the last axis) -> y;
    with residual, the Relu's output is added to the second Conv's and a
    third Conv follows the Add."""
    rng = np.random.default_rng(3)
    nodes, inits = [], []
    for node, ws in (_conv(rng, "1", "x", "c1", 3, 8), _conv(rng, "2", "r1", "c2", 8, 8)):
        nodes.append(node)
        inits += ws
    nodes.insert(1, helper.make_node("Relu", ["c1"], ["r1"], name="relu1"))
    last = "c2"
    if residual:
        nodes.append(helper.make_node("Add", ["r1", "c2"], ["s"], name="add"))
        node, ws = _conv(rng, "3", "s", "c3", 8, 8)
        nodes.append(node)
        inits += ws
        last = "c3"
    inits.append(numpy_helper.from_array((rng.standard_normal((8, 5)) * 0.3).astype(np.float32), "Wm"))
    nodes.append(helper.make_node("MatMul", [last, "Wm"], ["y"], name="mm"))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8, 8, 5])
    return sy_models.make_model(helper.make_graph(nodes, "convs", [x], [y], initializer=inits))


def _gemm_model():
    """x [4,16] -> Gemm (transB, alpha 0.5, beta 2) -> Relu -> Gemm (no bias) -> y [4,8]."""
    rng = np.random.default_rng(4)
    inits = [numpy_helper.from_array((rng.standard_normal(s) * 0.3).astype(np.float32), n)
             for n, s in (("W1", (32, 16)), ("B1", (32,)), ("W2", (32, 8)))]
    nodes = [helper.make_node("Gemm", ["x", "W1", "B1"], ["g1"], name="fc1", transB=1, alpha=0.5, beta=2.0),
             helper.make_node("Relu", ["g1"], ["r1"], name="relu1"),
             helper.make_node("Gemm", ["r1", "W2"], ["y"], name="fc2")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])
    return sy_models.make_model(helper.make_graph(nodes, "gemms", [x], [y], initializer=inits))


QOP_MODELS = {
    "convs": (lambda: _conv_model(False), (2, 3, 8, 8)),
    "residual": (lambda: _conv_model(True), (2, 3, 8, 8)),
    "gemms": (_gemm_model, (4, 16)),
    "cnn": (sy_models.small_cnn_model, (2, 3, 12, 12)),
}
# Largest |QOperator - float|, in steps of the output's quantization scale.
QOP_STEPS = 6


def _graph_links(model):
    producers = {o: n for n in model.graph.node for o in n.output}
    consumers = collections.defaultdict(list)
    for n in model.graph.node:
        for i in n.input:
            consumers[i].append(n)
    return producers, consumers


def _quantize_both(tmp_path, name, **kwargs):
    build, shape = QOP_MODELS[name]
    path = sy_models.save(build(), tmp_path / f"{name}.onnx")
    qop, qdq = tmp_path / f"{name}.qop.onnx", tmp_path / f"{name}.qdq.onnx"
    quantize_static(path, qop, RandomReader(shape), quant_format=QuantFormat.QOperator, **kwargs)
    quantize_static(path, qdq, RandomReader(shape), quant_format=QuantFormat.QDQ, **kwargs)
    onnx.checker.check_model(onnx.load(str(qop)))
    return path, qop, qdq, shape


def _check_qop_outputs(path, qop, qdq, shape, y_scale):
    """Within QOP_STEPS output steps of the float model and one step of the
    QDQ model (which rounds the same values at the same places). The input
    is a calibration feed, so that no activation leaves its measured range:
    clipping there would differ between tensors the two formats round."""
    x = RandomReader(shape).feeds[0]["x"]
    ref, got, qdq_out = _run(path, x), _run(qop, x), _run(qdq, x)
    assert got.shape == ref.shape and got.dtype == np.float32
    assert not np.array_equal(got, ref)  # it did quantize
    steps = np.abs(got - ref).max() / y_scale
    assert steps <= QOP_STEPS, f"{qop}: {steps:.2f} output steps from the float model"
    np.testing.assert_allclose(got, qdq_out, rtol=0, atol=1.001 * y_scale)
    return steps


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("activation_type", [QuantType.QUInt8, QuantType.QInt8])
@pytest.mark.parametrize("name", ["convs", "residual"])
def test_static_qoperator_convs(tmp_path, name, per_channel, activation_type):
    path, qop, qdq, shape = _quantize_both(tmp_path, name, per_channel=per_channel, activation_type=activation_type)
    model = onnx.load(str(qop))
    ops = _histogram(qop)
    if name == "convs":
        # Q on x, DQ on y: everything between stays integer.
        assert ops == {"QuantizeLinear": 1, "QLinearConv": 2, "QLinearMatMul": 1, "DequantizeLinear": 1}
    else:
        # The float Add reads r1 and c2 through DequantizeLinear; its sum is quantized for conv3.
        assert ops == {"QuantizeLinear": 2, "QLinearConv": 3, "QLinearMatMul": 1, "DequantizeLinear": 3, "Add": 1}
        add = next(n for n in model.graph.node if n.op_type == "Add")
        assert list(add.input) == ["r1", "c2"]
    producers, consumers = _graph_links(model)
    conv1, conv2 = (next(n for n in model.graph.node if n.name == f"conv{i}_quant") for i in (1, 2))
    # The Relu is folded: conv1 writes r1 quantized, which conv2 reads as it is.
    assert conv1.op_type == conv2.op_type == "QLinearConv" and "Relu" not in ops
    assert conv1.output[0] == "r1_quantized" and conv2.input[0] == "r1_quantized"
    assert producers[conv2.input[0]] is conv1 and _initializer(qop, "r1_zero_point") == get_qmin_qmax_for_qType(
        activation_type)[0]
    mm = next(n for n in model.graph.node if n.op_type == "QLinearMatMul")
    assert producers[mm.input[0]].op_type == "QLinearConv"
    assert [n.op_type for n in consumers[mm.output[0]]] == ["DequantizeLinear"]

    for i, node in (("1", conv1), ("2", conv2)):
        scale = _initializer(qop, f"W{i}_scale")
        assert scale.shape == ((8,) if per_channel else ())
        np.testing.assert_array_equal(scale, _initializer(qdq, f"W{i}_scale"))
        assert _initializer(qop, f"W{i}_quantized").dtype == np.int8
        x_scale = _initializer(qop, node.input[1])
        assert _initializer(qop, node.input[2]).dtype == activation_type.numpy_type
        # The bias: int32 with scale x_scale * w_scale, as the QDQ model's.
        b = numpy_helper.to_array(next(t for t in QOP_MODELS[name][0]().graph.initializer if t.name == "B" + i))
        bias = _initializer(qop, node.input[8])
        assert bias.dtype == np.int32
        np.testing.assert_array_equal(bias, np.round(b / (x_scale * scale).astype(np.float32)).astype(np.int32))
        np.testing.assert_array_equal(bias, _initializer(qdq, f"B{i}_quantized"))
    # Per channel: one scale per output column of the MatMul's B.
    assert _initializer(qop, "Wm_scale").shape == ((5,) if per_channel else ())
    _check_qop_outputs(path, qop, qdq, shape, _initializer(qop, "y_scale"))


@pytest.mark.parametrize("per_channel", [False, True])
def test_static_qoperator_gemm(tmp_path, per_channel):
    path, qop, qdq, shape = _quantize_both(tmp_path, "gemms", per_channel=per_channel)
    model = onnx.load(str(qop))
    # fc1 (with a bias): QLinearMatMul -> DequantizeLinear -> Add of beta * B1 -> Relu (float), then quantized
    # again for fc2, which has no bias and writes y through a DequantizeLinear.
    assert _histogram(qop) == {"QuantizeLinear": 2, "QLinearMatMul": 2, "DequantizeLinear": 2, "Add": 1, "Relu": 1}
    float_model = _gemm_model()
    arrays = {t.name: numpy_helper.to_array(t) for t in float_model.graph.initializer}
    w1, b1 = arrays["W1"], arrays["B1"]
    # alpha and transB folded into the weight, beta into the bias.
    w = 0.5 * w1.T
    scale = _initializer(qop, "W1_MatMul_scale")
    if per_channel:
        np.testing.assert_allclose(scale, np.abs(w).max(axis=0) / 127, rtol=1e-6)
    else:
        np.testing.assert_allclose(scale, np.abs(w).max() / 127, rtol=1e-6)
    np.testing.assert_array_equal(_initializer(qop, "W1_MatMul_quantized"),
                                  np.clip(np.rint(w / scale), -127, 127).astype(np.int8))
    add = next(n for n in model.graph.node if n.op_type == "Add")
    np.testing.assert_array_equal(_initializer(qop, add.input[1]), 2 * b1)
    fc2 = next(n for n in model.graph.node if n.name == "fc2_quant")
    assert fc2.op_type == "QLinearMatMul" and fc2.input[3] == "W2_quantized"
    assert _initializer(qop, "W2_scale").shape == ((8,) if per_channel else ())
    _check_qop_outputs(path, qop, qdq, shape, _initializer(qop, "y_scale"))


@pytest.mark.parametrize("per_channel", [False, True])
def test_static_qoperator_cnn(tmp_path, per_channel):
    # The Gemm (transB) ends the graph: its product is rounded to its own scale, then B3 is added in float.
    path, qop, qdq, shape = _quantize_both(tmp_path, "cnn", per_channel=per_channel, activation_type=QuantType.QUInt8)
    assert _histogram(qop) == {"QuantizeLinear": 2, "QLinearConv": 2, "DequantizeLinear": 2, "GlobalAveragePool": 1,
                               "Flatten": 1, "QLinearMatMul": 1, "Add": 1}
    # The QDQ model rounds y, this one the product before the bias: their outputs can differ by a step of either.
    y_scale = _initializer(qdq, "y_scale")
    assert abs(_initializer(qop, "y_MatMul_scale") / y_scale - 1) < 0.2
    _check_qop_outputs(path, qop, qdq, shape, y_scale)


def test_static_qoperator_nodes_to_exclude(tmp_path):
    path = sy_models.save(_conv_model(False), tmp_path / "convs.onnx")
    out = tmp_path / "convs.qop.onnx"
    quantize_static(path, out, RandomReader((2, 3, 8, 8)), quant_format=QuantFormat.QOperator,
                    nodes_to_exclude=["conv2"])
    model = onnx.load(str(out))
    # conv2 stays float between a DequantizeLinear of r1 and a QuantizeLinear of c2; relu1 still folded.
    assert _histogram(out) == {"QuantizeLinear": 2, "QLinearConv": 1, "DequantizeLinear": 2, "Conv": 1,
                               "QLinearMatMul": 1}
    conv2 = next(n for n in model.graph.node if n.op_type == "Conv")
    assert list(conv2.input) == ["r1", "W2", "B2"]
    _check_accuracy(path, out, (2, 3, 8, 8))


# --- ONNX Runtime runs the same files --------------------------------------------------------------------------------

def _ort_node_module():
    module = os.environ.get("ORT_NODE_MODULE") or str(REPO_ROOT / "bench" / ".node" / "node_modules" /
                                                       "onnxruntime-node")
    if shutil.which("node") is None or not os.path.isdir(module):
        pytest.skip("no Node.js with onnxruntime-node (bench/compare installs it into bench/.node)")
    return module


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_onnxruntime_agrees(tmp_path, name):
    module = _ort_node_module()
    build, shape = MODELS[name]
    path = sy_models.save(build(), tmp_path / f"{name}.onnx")
    outputs = {"dynamic": tmp_path / "dyn.onnx", "qdq": tmp_path / "qdq.onnx",
               "qdq_per_channel": tmp_path / "qdq_pc.onnx", "qoperator": tmp_path / "qop.onnx",
               "qoperator_per_channel": tmp_path / "qop_pc.onnx"}
    quantize_dynamic(path, outputs["dynamic"])
    quantize_static(path, outputs["qdq"], RandomReader(shape))
    quantize_static(path, outputs["qdq_per_channel"], RandomReader(shape), per_channel=True)
    quantize_static(path, outputs["qoperator"], RandomReader(shape), quant_format=QuantFormat.QOperator)
    quantize_static(path, outputs["qoperator_per_channel"], RandomReader(shape), quant_format=QuantFormat.QOperator,
                    per_channel=True)
    x = _sample(shape)
    for kind, quantized in outputs.items():
        ort = _ort_run(module, quantized, x, tmp_path / f"{kind}.ort.json")
        # ONNX Runtime fuses the QDQ nodes into integer kernels whose requantization may differ by one step.
        np.testing.assert_allclose(_run(quantized, x), ort, rtol=0, atol=0.01 * np.ptp(ort), err_msg=kind)


def _ort_run(module, quantized, x, result):
    x_path = result.with_suffix(".x.npy")
    np.save(x_path, x)
    run = subprocess.run(["node", str(REPO_ROOT / "bench" / "ort_bench.mjs"), str(quantized), "--runs", "1",
                          "--warmup", "0", "--input", f"x={x_path}", "--outputs", str(result)],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "ORT_NODE_MODULE": module})
    assert run.returncode == 0, f"ONNX Runtime on {quantized}: {run.stderr}"
    y = json.loads(result.read_text())["y"]
    return np.array(y["data"], np.float32).reshape(y["dims"])


@pytest.mark.parametrize("name", ["convs", "residual", "gemms"])
@pytest.mark.parametrize("per_channel", [False, True])
def test_onnxruntime_agrees_qoperator(tmp_path, name, per_channel):
    # QLinearConv and QLinearMatMul are standard ops: ONNX Runtime runs them without any QDQ fusion.
    module = _ort_node_module()
    _, qop, _, shape = _quantize_both(tmp_path, name, per_channel=per_channel)
    x = RandomReader(shape).feeds[0]["x"]
    np.testing.assert_allclose(_run(qop, x), _ort_run(module, qop, x, tmp_path / "qop.ort.json"), rtol=0,
                               atol=1.001 * _initializer(qop, "y_scale"))
