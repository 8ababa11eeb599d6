"""The runtime's edges from Python under hostile input: thread counts,
IOBinding buffers, bool bytes and external data that changes under a live
session. Each must raise an exception that names what and where, never
crash, hang or overrun a buffer."""

import os
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import sy_models
import switchyard as ort

CPU = ["CPUExecutionProvider"]


def test_absurd_thread_count_fails_at_creation_quickly(add_mul_path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 100000
    start = time.monotonic()
    with pytest.raises(ort.InvalidArgument, match=r"intra_op_threads is 100000, more than the limit of \d+"):
        ort.InferenceSession(add_mul_path, so, providers=CPU)
    assert time.monotonic() - start < 2.0

    so = ort.SessionOptions()
    so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    so.inter_op_num_threads = 100000
    with pytest.raises(ort.InvalidArgument, match="inter_op_threads is 100000"):
        ort.InferenceSession(add_mul_path, so, providers=CPU)


def _relu_path(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "relu", [x], [y])
    return sy_models.save(sy_models.make_model(graph), tmp_path / "relu.onnx")


def test_bound_output_array_is_written_in_place(tmp_path):
    sess = ort.InferenceSession(_relu_path(tmp_path), providers=CPU)
    x = np.array([[-1.5, 2, -3], [4, -5, 6]], dtype=np.float32)
    y = np.full((2, 3), 99, dtype=np.float32)
    binding = sess.io_binding()
    binding.bind_input("x", "cpu", 0, np.float32, [2, 3], x)
    binding.bind_output("y", "cpu", 0, np.float32, [2, 3], y)
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_bound_arrays_are_checked(tmp_path):
    sess = ort.InferenceSession(_relu_path(tmp_path), providers=CPU)
    binding = sess.io_binding()
    readonly = np.zeros((2, 3), dtype=np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ort.InvalidArgument, match="output 'y': the array bound is read-only"):
        binding.bind_output("y", "cpu", 0, np.float32, [2, 3], readonly)
    strided = np.zeros((2, 6), dtype=np.float32)[:, ::2]
    with pytest.raises(ort.InvalidArgument, match="output 'y': the array bound is not C-contiguous"):
        binding.bind_output("y", "cpu", 0, np.float32, [2, 3], strided)
    with pytest.raises(ort.InvalidArgument, match="output 'y': the array bound is float64, not float"):
        binding.bind_output("y", "cpu", 0, np.float32, [2, 3], np.zeros((2, 3)))
    small = np.zeros(5, dtype=np.float32)
    with pytest.raises(ort.InvalidArgument, match=r"output 'y': the buffer has 20 bytes, but float\[2,3\] needs 24"):
        binding.bind_output("y", "cpu", 0, np.float32, [2, 3], small)
    with pytest.raises(ort.InvalidArgument, match=r"input 'x': the buffer has 20 bytes, but float\[2,3\] needs 24"):
        binding.bind_input("x", "cpu", 0, np.float32, [2, 3], small)
    with pytest.raises(ort.InvalidArgument, match=r"input 'x': the data pointer is null, but float\[2,3\] needs 24"):
        binding.bind_input("x", "cpu", 0, np.float32, [2, 3], 0)
    with pytest.raises(ort.InvalidArgument, match=r"input 'x': shape \[2,-3\] has a negative dimension -3"):
        binding.bind_input("x", "cpu", 0, np.float32, [2, -3], small.ctypes.data)
    with pytest.raises(ort.InvalidArgument, match=r"input 'x': the buffer has 20 bytes"):
        binding.bind_input("x", "cpu", 0, np.float32, [2, 3], small.ctypes.data, buffer_size=small.nbytes)


def test_wrong_dtype_and_strided_inputs(tmp_path):
    sess = ort.InferenceSession(_relu_path(tmp_path), providers=CPU)
    binding = sess.io_binding()
    binding.bind_cpu_input("x", np.ones((2, 3), dtype=np.int32))
    binding.bind_output("y")
    with pytest.raises(ort.InvalidArgument, match=r"input 'x': expected tensor\(float\), got tensor\(int32\)"):
        sess.run_with_iobinding(binding)
    # A strided view is copied into a contiguous tensor: the right answer.
    base = np.arange(-6, 6, dtype=np.float32).reshape(2, 6)
    binding.bind_cpu_input("x", base[:, ::2])
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], np.maximum(base[:, ::2], 0))


def test_bool_feed_with_other_bytes_is_refused(tmp_path):
    x = helper.make_tensor_value_info("mask", TensorProto.BOOL, [4])
    y = helper.make_tensor_value_info("y", TensorProto.BOOL, [4])
    graph = helper.make_graph([helper.make_node("Not", ["mask"], ["y"], name="not")], "not", [x], [y])
    sess = ort.InferenceSession(sy_models.save(sy_models.make_model(graph), tmp_path / "not.onnx"), providers=CPU)
    raw = np.array([0, 1, 2, 0], dtype=np.uint8).view(np.bool_)
    with pytest.raises(ort.InvalidArgument, match="input 'mask': bool element 2 of bool\\[4\\] is the byte 2"):
        sess.run(None, {"mask": raw})
    (out,) = sess.run(None, {"mask": raw != 0})
    np.testing.assert_array_equal(out, [True, False, False, True])


def _external_model(tmp_path):
    w = np.array([1, 2, 3, 4], dtype=np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="add")], "add", [x], [y],
                              initializer=[numpy_helper.from_array(w, "w")])
    model = sy_models.make_model(graph)
    path = str(tmp_path / "model.onnx")
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location="weights.bin",
                    size_threshold=0)
    return path, str(tmp_path / "weights.bin")


def test_copied_external_data_survives_the_file_changing(tmp_path):
    path, data = _external_model(tmp_path)
    so = ort.SessionOptions()
    so.add_session_config_entry("session.external_data", "copy")
    sess = ort.InferenceSession(path, so, providers=CPU)
    x = np.array([10, 20, 30, 40], dtype=np.float32)
    want = x + np.array([1, 2, 3, 4], dtype=np.float32)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], want)
    size = os.path.getsize(data)
    with open(data, "wb") as f:
        f.write(np.full(size // 4, -7, dtype=np.float32).tobytes())
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], want)
    os.truncate(data, 0)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], want)


def test_external_data_mode_must_be_known(tmp_path):
    path, _ = _external_model(tmp_path)
    so = ort.SessionOptions()
    so.add_session_config_entry("session.external_data", "mmap")
    with pytest.raises(ort.InvalidArgument, match="accepted: 'map' or 'copy'"):
        ort.InferenceSession(path, so, providers=CPU)
