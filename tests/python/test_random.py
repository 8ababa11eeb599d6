"""The random generators: with a seed they give numpy's legacy RandomState
values (ONNX's reference draws with it), the same on every run; the
distributions and shapes hold without one."""

import numpy as np
from onnx import TensorProto, helper

import switchyard as ort
import sy_models


def session(tmp_path, node, inputs=(), out_type=TensorProto.FLOAT):
    graph = helper.make_graph([node], "random", list(inputs), [helper.make_tensor_value_info("y", out_type, None)])
    return ort.InferenceSession(sy_models.save(sy_models.make_model(graph, check=False), tmp_path / "random.onnx"))


def test_seeded_uniform_and_normal_are_numpys_and_repeat(tmp_path):
    uniform = session(tmp_path, helper.make_node("RandomUniform", [], ["y"], shape=[3, 4], low=-2.0, high=5.0, seed=7.0))
    want = np.random.RandomState(7).uniform(-2.0, 5.0, (3, 4)).astype(np.float32)
    np.testing.assert_allclose(uniform.run(None, {})[0], want, rtol=1e-6)
    np.testing.assert_array_equal(uniform.run(None, {})[0], uniform.run(None, {})[0])
    normal = session(tmp_path, helper.make_node("RandomNormal", [], ["y"], shape=[5, 3], mean=1.0, scale=2.0, seed=3.0,
                                                dtype=TensorProto.DOUBLE), out_type=TensorProto.DOUBLE)
    np.testing.assert_allclose(normal.run(None, {})[0], np.random.RandomState(3).normal(1.0, 2.0, (5, 3)), rtol=1e-12)


def test_like_forms_bernoulli_and_multinomial_without_seed(tmp_path):
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [200, 50])
    x = np.zeros((200, 50), np.float32)
    y = session(tmp_path, helper.make_node("RandomNormalLike", ["x"], ["y"]), [x_info]).run(None, {"x": x})[0]
    assert y.shape == (200, 50) and abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05
    a = session(tmp_path, helper.make_node("RandomUniformLike", ["x"], ["y"], low=3.0, high=4.0), [x_info])
    y1, y2 = a.run(None, {"x": x})[0], a.run(None, {"x": x})[0]
    assert y1.min() >= 3.0 and y1.max() < 4.0 and not np.array_equal(y1, y2)  # each run draws afresh
    p = np.tile(np.array([0.0, 1.0, 0.25], np.float32), (4000, 1))
    b = session(tmp_path, helper.make_node("Bernoulli", ["x"], ["y"]),
                [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4000, 3])]).run(None, {"x": p})[0]
    assert (b[:, 0] == 0).all() and (b[:, 1] == 1).all() and abs(b[:, 2].mean() - 0.25) < 0.03
    logits = np.log(np.array([[0.1, 0.6, 0.3]], np.float32))
    m = session(tmp_path, helper.make_node("Multinomial", ["x"], ["y"], sample_size=20000, seed=1.0),
                [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])], TensorProto.INT32).run(None, {"x": logits})[0]
    assert m.shape == (1, 20000) and m.dtype == np.int32
    np.testing.assert_allclose(np.bincount(m[0], minlength=3) / 20000, [0.1, 0.6, 0.3], atol=0.02)
