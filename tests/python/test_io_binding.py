"""IOBinding and OrtValue, as onnxruntime has them. On this CPU machine the
bindings are host memory; CUDA values must fail with the provider's reason
(the same code paths keep tensors on the GPU where one is present)."""

import numpy as np
import pytest

import switchyard as ort

HAS_CUDA = "CUDAExecutionProvider" in ort.get_available_providers()


def _feeds():
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    y = np.full((2, 3), 2.0, dtype=np.float32)
    return x, y


def test_cpu_binding_matches_run(add_mul_path):
    sess = ort.InferenceSession(add_mul_path, providers=["CPUExecutionProvider"])
    x, y = _feeds()
    binding = sess.io_binding()
    binding.bind_cpu_input("X", x)
    binding.bind_cpu_input("Y", y)
    binding.bind_output("W")
    binding.bind_output("Z", "cpu")
    sess.run_with_iobinding(binding)
    w, z = binding.copy_outputs_to_cpu()
    np.testing.assert_array_equal(w, x * y)
    np.testing.assert_array_equal(z, x + y)
    outs = binding.get_outputs()
    assert [o.device_name() for o in outs] == ["cpu", "cpu"]
    assert outs[0].shape() == [2, 3]
    assert outs[0].data_type() == "tensor(float)"


def test_bound_input_is_a_copy_and_binding_is_reusable(add_mul_path):
    sess = ort.InferenceSession(add_mul_path, providers=["CPUExecutionProvider"])
    x, y = _feeds()
    binding = sess.io_binding()
    binding.bind_cpu_input("X", x)
    binding.bind_cpu_input("Y", y)
    binding.bind_output("Z")
    x[:] = 100.0  # changing the array after binding does not change the bound input
    for _ in range(3):
        sess.run_with_iobinding(binding)
        (z,) = binding.copy_outputs_to_cpu()
        np.testing.assert_array_equal(z, _feeds()[0] + y)


def test_ortvalue_input_and_preallocated_output(add_mul_path):
    sess = ort.InferenceSession(add_mul_path, providers=["CPUExecutionProvider"])
    x, y = _feeds()
    binding = sess.io_binding()
    binding.bind_ortvalue_input("X", ort.OrtValue.ortvalue_from_numpy(x))
    binding.bind_ortvalue_input("Y", ort.OrtValue.ortvalue_from_numpy(y, "cpu", 0))
    out = ort.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32)
    binding.bind_ortvalue_output("W", out)
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(out.numpy(), x * y)
    assert binding.get_outputs()[0].data_ptr() == out.data_ptr()

    wrong = ort.OrtValue.ortvalue_from_shape_and_type([6], np.float32)
    binding.bind_ortvalue_output("W", wrong)
    # Refused before the run, from the declared output: rank 2, not 1.
    with pytest.raises(ort.InvalidArgument,
                       match=r"output 'W' is declared tensor\(float\) \[N,3\] but the tensor bound for it is float\[6\]"):
        sess.run_with_iobinding(binding)


def test_missing_bound_input_names_it(add_mul_path):
    sess = ort.InferenceSession(add_mul_path, providers=["CPUExecutionProvider"])
    binding = sess.io_binding()
    binding.bind_cpu_input("X", _feeds()[0])
    binding.bind_output("Z")
    with pytest.raises(ort.InvalidArgument, match="input 'Y'"):
        sess.run_with_iobinding(binding)


def test_unknown_device_type_lists_the_accepted_ones():
    with pytest.raises(ort.InvalidArgument, match="unknown device_type 'tpu'; accepted: cpu, cuda"):
        ort.OrtValue.ortvalue_from_numpy(np.zeros(3, np.float32), "tpu", 0)


@pytest.mark.skipif(HAS_CUDA, reason="a CUDA device is present")
def test_cuda_ortvalue_without_a_gpu_says_why():
    with pytest.raises(ort.Error, match="CUDAExecutionProvider is not"):
        ort.OrtValue.ortvalue_from_numpy(np.zeros(3, np.float32), "cuda", 0)


@pytest.mark.skipif(not HAS_CUDA, reason="skipped: no CUDA device")
def test_cuda_binding_keeps_outputs_on_the_gpu(add_mul_path):
    sess = ort.InferenceSession(add_mul_path, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    x, y = _feeds()
    binding = sess.io_binding()
    binding.bind_ortvalue_input("X", ort.OrtValue.ortvalue_from_numpy(x, "cuda", 0))
    binding.bind_ortvalue_input("Y", ort.OrtValue.ortvalue_from_numpy(y, "cuda", 0))
    binding.bind_output("Z", "cuda")
    sess.run_with_iobinding(binding)
    (z,) = binding.get_outputs()
    assert z.device_name() == "cuda"
    np.testing.assert_allclose(z.numpy(), x + y)
