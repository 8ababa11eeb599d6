"""Models of ai.onnx opsets 1 to 6 (what PyTorch and Caffe2 exported before
2018) load through the version adapters (src/model/version_adapter.cc) and
compute what the old op versions define, checked against numpy."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import switchyard as ort
import sy_models

rng = np.random.default_rng(7)


def run(tmp_path, nodes, inputs, initializers, opset, output="y"):
    """Runs an opset-`opset` graph; inputs maps name -> array."""
    infos = [helper.make_tensor_value_info(name, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], list(a.shape))
             for name, a in inputs.items()]
    inits = [numpy_helper.from_array(a, name) for name, a in initializers.items()]
    graph = helper.make_graph(nodes, "old", infos, [helper.make_tensor_value_info(output, TensorProto.UNDEFINED, None)],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 3
    path = sy_models.save(model, tmp_path / "old.onnx")
    return ort.InferenceSession(path).run(None, inputs)[0]


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_legacy_broadcast_at_an_axis_with_a_constant_and_a_computed_b(tmp_path):
    x, b = f32(2, 3, 4, 5), f32(3, 4)
    nodes = [helper.make_node("Add", ["x", "b"], ["s"], broadcast=1, axis=1),
             helper.make_node("Relu", ["bv"], ["br"]),  # a B only known at run time
             helper.make_node("Mul", ["s", "br"], ["y"], broadcast=1, axis=1)]
    y = run(tmp_path, nodes, {"x": x, "bv": b}, {"b": b}, 6)
    want = (x + b[None, :, :, None]) * np.maximum(b, 0)[None, :, :, None]
    np.testing.assert_allclose(y, want, rtol=1e-6)


def test_legacy_broadcast_suffix_and_opset_1_consumed_inputs(tmp_path):
    x, b = f32(2, 3, 4), f32(4)
    nodes = [helper.make_node("Sub", ["x", "b"], ["y"], broadcast=1, consumed_inputs=[0, 0])]
    np.testing.assert_allclose(run(tmp_path, nodes, {"x": x}, {"b": b}, 1), x - b, rtol=1e-6)


def test_legacy_comparison_with_axis(tmp_path):
    x, b = f32(2, 3, 4), f32(3)
    nodes = [helper.make_node("Greater", ["x", "b"], ["y"], broadcast=1, axis=1)]
    np.testing.assert_array_equal(run(tmp_path, nodes, {"x": x}, {"b": b}, 6), x > b[None, :, None])


def test_batchnorm_prelu_gemm_dropout_of_opset_6(tmp_path):
    x = f32(2, 3, 4, 4)
    scale, bias, mean = f32(3), f32(3), f32(3)
    var = np.abs(f32(3)) + 0.5
    slope = np.array([0.1, 0.2, 0.3], np.float32)  # per channel, as PRelu-6 reads a [C] slope
    w, c = f32(5, 48), f32(5)
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "bb", "m", "v"], ["bn"], is_test=1, epsilon=1e-5),
             helper.make_node("PRelu", ["bn", "slope"], ["p"]),
             helper.make_node("Dropout", ["p"], ["d"], is_test=1, ratio=0.5),
             helper.make_node("Flatten", ["d"], ["f"]),
             helper.make_node("Gemm", ["f", "w", "c"], ["y"], broadcast=1, transB=1)]
    y = run(tmp_path, nodes, {"x": x}, {"s": scale, "bb": bias, "m": mean, "v": var, "slope": slope, "w": w, "c": c}, 6)
    bn = (x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5) * scale[:, None, None] + bias[:, None, None]
    p = np.where(bn < 0, bn * slope[:, None, None], bn)
    np.testing.assert_allclose(y, p.reshape(2, 48) @ w.T + c, rtol=1e-5, atol=1e-5)


def test_cast_concat_reshape_split_tile_of_opset_1(tmp_path):
    x = f32(2, 3)
    nodes = [helper.make_node("Cast", ["x"], ["xi"], to="INT32"),
             helper.make_node("Cast", ["xi"], ["xf"], to="float"),
             helper.make_node("Concat", ["xf", "xf"], ["c"]),  # axis defaults to 1
             helper.make_node("Reshape", ["c"], ["r"], shape=[3, 4]),
             helper.make_node("Split", ["r", "sizes"], ["s0", "s1"], axis=1),
             helper.make_node("Tile", ["s1", "tiles", "axis"], ["y"])]
    inits = {"sizes": np.array([1, 3], np.int64), "tiles": np.array(2, np.int64), "axis": np.array(0, np.int64)}
    y = run(tmp_path, nodes, {"x": x}, inits, 1)
    r = np.concatenate([np.trunc(x), np.trunc(x)], axis=1).reshape(3, 4)
    np.testing.assert_array_equal(y, np.tile(r[:, 1:], (2, 1)))


def test_upsample_of_opset_1(tmp_path):
    x = f32(1, 2, 3, 4)
    nodes = [helper.make_node("Upsample", ["x"], ["y"], height_scale=2.0, width_scale=3.0, mode="nearest")]
    np.testing.assert_array_equal(run(tmp_path, nodes, {"x": x}, {}, 1), x.repeat(2, axis=2).repeat(3, axis=3))


def test_broadcast_axis_outside_a_is_a_clear_error(tmp_path):
    nodes = [helper.make_node("Add", ["x", "b"], ["y"], broadcast=1, axis=2)]
    with pytest.raises(Exception, match="axis 2"):
        run(tmp_path, nodes, {"x": f32(2, 3)}, {"b": f32(3)}, 6)
