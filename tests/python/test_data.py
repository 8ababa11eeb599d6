"""numpy <-> tensors: every dtype, zero-copy inputs, layouts, and bad input."""

import numpy as np
import pytest
from onnx import TensorProto

import switchyard as ort
from switchyard import _switchyard
import sy_models

NUMERIC = [
    (np.float16, TensorProto.FLOAT16, "float16"),
    (np.float32, TensorProto.FLOAT, "float"),
    (np.float64, TensorProto.DOUBLE, "double"),
    (np.int8, TensorProto.INT8, "int8"),
    (np.int16, TensorProto.INT16, "int16"),
    (np.int32, TensorProto.INT32, "int32"),
    (np.int64, TensorProto.INT64, "int64"),
    (np.uint8, TensorProto.UINT8, "uint8"),
    (np.uint16, TensorProto.UINT16, "uint16"),
    (np.uint32, TensorProto.UINT32, "uint32"),
    (np.uint64, TensorProto.UINT64, "uint64"),
    (np.bool_, TensorProto.BOOL, "bool"),
]


def identity_session(tmp_path, elem_type, shape=(2, 3)):
    return ort.InferenceSession(sy_models.save(sy_models.identity_model(elem_type, shape), tmp_path / "id.onnx"))


def sample(dtype, shape=(2, 3)):
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return (np.arange(n) % 3 == 0).reshape(shape)
    info = np.finfo(dtype) if np.issubdtype(dtype, np.floating) else np.iinfo(dtype)
    values = np.linspace(float(info.min) / 2, float(info.max) / 2, n)
    if np.issubdtype(dtype, np.floating):
        values[0] = -0.0
        values[1] = np.inf
    return values.astype(dtype).reshape(shape)


@pytest.mark.parametrize("dtype, elem_type, name", NUMERIC, ids=[n for _, _, n in NUMERIC])
def test_numeric_round_trip(tmp_path, dtype, elem_type, name):
    sess = identity_session(tmp_path, elem_type)
    assert sess.get_inputs()[0].type == f"tensor({name})"
    x = sample(dtype)
    (y,) = sess.run(None, {"x": x})
    assert y.dtype == np.dtype(dtype)
    assert y.shape == x.shape
    np.testing.assert_array_equal(y, x)
    assert y.ctypes.data != x.ctypes.data  # an output never aliases a feed


@pytest.mark.parametrize("dtype, elem_type", [(np.complex64, TensorProto.COMPLEX64),
                                              (np.complex128, TensorProto.COMPLEX128)])
def test_complex_round_trip(tmp_path, dtype, elem_type):
    try:
        sess = identity_session(tmp_path, elem_type)
    except ort.Error as e:
        pytest.skip(f"no complex Identity in this build: {e}")
    x = (np.arange(6) + 1j * np.arange(6)[::-1]).astype(dtype).reshape(2, 3)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], x)


@pytest.mark.parametrize("make", [
    lambda: np.array([["a", "bb", ""], ["ünï", "€", "x" * 100]]),
    lambda: np.array([["a", "bb", ""], ["ünï", "€", "x" * 100]], dtype=object),
    lambda: np.array([[b"a", b"bb", b""], ["ünï".encode(), "€".encode(), b"x" * 100]]),
], ids=["unicode", "object", "bytes"])
def test_string_round_trip(tmp_path, make):
    sess = identity_session(tmp_path, TensorProto.STRING)
    assert sess.get_inputs()[0].type == "tensor(string)"
    x = make()
    (y,) = sess.run(None, {"x": x})
    assert y.dtype == object
    expected = [[s.decode() if isinstance(s, bytes) else s for s in row] for row in x.tolist()]
    assert y.tolist() == expected


def test_string_input_rejects_non_strings(tmp_path):
    sess = identity_session(tmp_path, TensorProto.STRING)
    with pytest.raises(ort.InvalidArgument, match="element 1 .* is a int"):
        sess.run(None, {"x": np.array([["a", 3, "b"], ["c", "d", "e"]], dtype=object)})


def test_scalar_and_high_rank(tmp_path):
    sess = identity_session(tmp_path, TensorProto.FLOAT, shape=())
    (y,) = sess.run(None, {"x": np.array(2.5, np.float32)})
    assert y.shape == () and y == np.float32(2.5)
    (y,) = sess.run(None, {"x": np.float32(1.5)})  # a numpy scalar
    assert y.shape == () and y == np.float32(1.5)
    shape = (1, 2, 1, 2, 1, 2, 1, 2, 1, 2)  # above the inline rank of Shape
    sess = identity_session(tmp_path, TensorProto.INT32, shape=shape)
    x = np.arange(32, dtype=np.int32).reshape(shape)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], x)


# ---- zero copy and layouts --------------------------------------------------------


def test_zero_copy_inputs():
    assert _switchyard._input_is_zero_copy(np.ones((3, 4), np.float32))
    assert _switchyard._input_is_zero_copy(np.ones((3, 4), np.int64))
    assert _switchyard._input_is_zero_copy(np.ones((3, 4), np.float32)[1:])  # a C-contiguous slice
    readonly = np.frombuffer(bytes(48), dtype=np.float32).reshape(3, 4)
    assert _switchyard._input_is_zero_copy(readonly)
    # These need a copy to become a dense tensor.
    assert not _switchyard._input_is_zero_copy(np.ones((4, 3), np.float32).T)
    assert not _switchyard._input_is_zero_copy(np.ones((3, 8), np.float32)[:, ::2])
    assert not _switchyard._input_is_zero_copy(np.ones((3, 4), dtype=">f4"))
    assert not _switchyard._input_is_zero_copy(np.array(["a", "b"]))


def test_non_contiguous_and_byte_swapped_inputs(tmp_path):
    sess = identity_session(tmp_path, TensorProto.FLOAT, shape=(3, 2))
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = base[:, ::2]
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], x)
    x = np.arange(6, dtype=np.float32).reshape(2, 3).T
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], x)
    x = np.arange(6, dtype=">f4").reshape(3, 2)
    (y,) = sess.run(None, {"x": x})
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, x)


def test_input_kept_alive_without_caller_reference(add_mul_path):
    sess = ort.InferenceSession(add_mul_path)
    z, _ = sess.run(None, {"X": np.full((2, 3), 2, np.float32), "Y": np.full((2, 3), 3, np.float32)})
    np.testing.assert_array_equal(z, np.full((2, 3), 5, np.float32))


def test_lists_are_read_as_numpy_would(tmp_path):
    sess = identity_session(tmp_path, TensorProto.INT64, shape=(2,))
    np.testing.assert_array_equal(sess.run(None, {"x": [4, 5]})[0], np.array([4, 5]))
    sess = identity_session(tmp_path, TensorProto.FLOAT, shape=(2,))
    # A list of floats is float64 to numpy; like onnxruntime, no conversion.
    with pytest.raises(ort.InvalidArgument, match=r"expected tensor\(float\), got tensor\(double\)"):
        sess.run(None, {"x": [1.0, 2.0]})


# ---- errors ----------------------------------------------------------------------


def test_missing_file(tmp_path):
    with pytest.raises(ort.NoSuchFile, match="does_not_exist.onnx"):
        ort.InferenceSession(str(tmp_path / "does_not_exist.onnx"))


def test_not_a_model(tmp_path):
    with pytest.raises(ort.InvalidProtobuf) as info:
        ort.InferenceSession(b"this is not an onnx model at all")
    assert "INVALID_PROTOBUF" in str(info.value)
    path = tmp_path / "junk.onnx"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ort.InvalidProtobuf):
        ort.InferenceSession(str(path))


def test_invalid_graph(tmp_path):
    from onnx import helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    # 'missing' is produced by no node and is no input or initializer.
    graph = helper.make_graph([helper.make_node("Add", ["x", "missing"], ["y"], name="bad_add")], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with pytest.raises(ort.InvalidGraph, match="missing"):
        ort.InferenceSession(model.SerializeToString())


def test_unsupported_op(tmp_path):
    from onnx import helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Frobnicate", ["x"], ["y"], name="frob", domain="com.example")],
                              "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    model.ir_version = 8
    with pytest.raises(ort.Error, match="Frobnicate"):
        ort.InferenceSession(model.SerializeToString())


def test_wrong_input_type(add_mul_path):
    sess = ort.InferenceSession(add_mul_path)
    x = np.ones((2, 3), np.float64)
    with pytest.raises(ort.InvalidArgument, match=r"input 'X': expected tensor\(float\), got tensor\(double\)"):
        sess.run(None, {"X": x, "Y": x.astype(np.float32)})


def test_wrong_rank_and_dims(add_mul_path):
    sess = ort.InferenceSession(add_mul_path)
    good = np.ones((2, 3), np.float32)
    with pytest.raises(ort.InvalidArgument, match=r"input 'Y': expected rank 2 \[N,3\], got rank 3 \[2,3,1\]"):
        sess.run(None, {"X": good, "Y": np.ones((2, 3, 1), np.float32)})
    with pytest.raises(ort.InvalidArgument, match=r"input 'X': dimension 1 must be 3.*got shape \[2,4\]"):
        sess.run(None, {"X": np.ones((2, 4), np.float32), "Y": good})


def test_unknown_and_missing_inputs(add_mul_path):
    sess = ort.InferenceSession(add_mul_path)
    good = np.ones((2, 3), np.float32)
    with pytest.raises(ort.InvalidArgument, match="unknown input 'Q'.*X, Y"):
        sess.run(None, {"X": good, "Y": good, "Q": good})
    # Missing inputs: onnxruntime raises ValueError; MissingInput is both.
    with pytest.raises(ValueError, match=r"'Y' \(tensor\(float\) \[N,3\]\).*given: 'X'"):
        sess.run(None, {"X": good})
    with pytest.raises(ort.InvalidArgument, match="'X'.*'Y'"):
        sess.run(None, {})
    with pytest.raises(ort.InvalidArgument, match="keys must be input names"):
        sess.run(None, {1: good, "X": good, "Y": good})


def test_unconvertible_input(add_mul_path):
    sess = ort.InferenceSession(add_mul_path)
    good = np.ones((2, 3), np.float32)
    with pytest.raises(ort.InvalidArgument, match="input 'X'"):
        sess.run(None, {"X": np.ones((2, 3), "datetime64[s]"), "Y": good})


def test_error_message_layout(add_mul_path):
    sess = ort.InferenceSession(add_mul_path)
    with pytest.raises(ort.InvalidArgument) as info:
        sess.run(["nope"], {"X": np.ones((1, 3), np.float32), "Y": np.ones((1, 3), np.float32)})
    assert str(info.value).startswith("[Switchyard] : 2 : INVALID_ARGUMENT : ")
