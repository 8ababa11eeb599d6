"""Sequences and optionals through the Python API, as onnxruntime takes and
returns them: a list of arrays for a sequence, None for an empty optional,
the held value for a full one; in run() and in IO binding."""

import numpy as np
import pytest

import switchyard as ort
import sy_models


@pytest.fixture
def seq_sess(tmp_path):
    return ort.InferenceSession(sy_models.save(sy_models.sequence_model(), tmp_path / "seq.onnx"))


@pytest.fixture
def opt_sess(tmp_path):
    return ort.InferenceSession(sy_models.save(sy_models.optional_model(), tmp_path / "opt.onnx"))


def _assert_list_equal(got, want):
    assert isinstance(got, list)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_node_arg_types_are_spelled_as_onnxruntime_does(seq_sess, opt_sess):
    assert [(i.name, i.type) for i in seq_sess.get_inputs()] == [("s", "seq(tensor(float))")]
    assert [(o.name, o.type) for o in seq_sess.get_outputs()] == [
        ("s_out", "seq(tensor(float))"), ("n", "tensor(int64)"), ("cat", "tensor(float)"),
        ("parts", "seq(tensor(float))")]
    assert [(i.name, i.type) for i in opt_sess.get_inputs()] == [
        ("o", "optional(tensor(float))"), ("os", "optional(seq(tensor(float)))")]
    assert [o.type for o in opt_sess.get_outputs()] == [
        "tensor(bool)", "optional(tensor(float))", "optional(seq(tensor(float)))"]


def test_a_list_feeds_a_sequence_and_a_sequence_comes_back_as_a_list(seq_sess):
    a = np.array([1.5, -2.0], np.float32)
    b = np.arange(6, dtype=np.float32).reshape(2, 3)[0]
    s_out, n, cat, parts = seq_sess.run(None, {"s": [a, b]})
    _assert_list_equal(s_out, [a, b])
    assert n == 2 and n.dtype == np.int64
    want = np.concatenate([a, b])
    np.testing.assert_array_equal(cat, want)
    # A sequence the model computed: one [1] piece per element of cat.
    _assert_list_equal(parts, [want[i:i + 1] for i in range(len(want))])
    # The results are copies: changing the feed changes nothing returned.
    a[0] = 100
    assert s_out[0][0] == 1.5


def test_a_tuple_is_a_sequence_too(seq_sess):
    a = np.ones(2, np.float32)
    (s_out,) = seq_sess.run(["s_out"], {"s": (a, a * 2)})
    _assert_list_equal(s_out, [a, a * 2])


def test_an_empty_list_takes_the_declared_element_type(tmp_path):
    sess = ort.InferenceSession(sy_models.save(sy_models.sequence_model(concat=False), tmp_path / "s.onnx"))
    s_out, n = sess.run(None, {"s": []})
    assert s_out == []
    assert n == 0


def test_none_and_values_feed_optionals(opt_sess):
    has, o_out, os_out = opt_sess.run(None, {"o": None, "os": None})
    assert not has
    assert o_out is None
    assert os_out is None

    x = np.array([[1, 2], [3, 4]], np.float32)
    items = [np.array([5], np.float32), np.zeros((0,), np.float32)]
    has, o_out, os_out = opt_sess.run(None, {"o": x, "os": items})
    assert has
    np.testing.assert_array_equal(o_out, x)
    _assert_list_equal(os_out, items)

    _, _, os_out = opt_sess.run(None, {"o": x, "os": []})
    assert os_out == []


def test_wrong_feeds_name_the_input(seq_sess, opt_sess, tmp_path):
    a = np.ones(2, np.float32)
    with pytest.raises(ort.InvalidArgument, match=r"input 's' \(seq\(tensor\(float\)\)\): element 1 is tensor\(int64\)"):
        seq_sess.run(None, {"s": [a, np.ones(2, np.int64)]})
    with pytest.raises(ort.InvalidArgument, match=r"input 's' \(seq\(tensor\(float\)\)\): element 0 is tensor\(double\)"):
        seq_sess.run(None, {"s": [np.ones(2)]})
    with pytest.raises(ort.InvalidArgument, match=r"input 's' \(seq\(tensor\(float\)\)\): expected a list of numpy "
                                                  r"arrays, got a ndarray"):
        seq_sess.run(None, {"s": a})
    with pytest.raises(ort.InvalidArgument, match=r"input 's' \(seq\(tensor\(float\)\)\): got None, which only an "
                                                  r"optional input takes"):
        seq_sess.run(None, {"s": None})
    with pytest.raises(ort.InvalidArgument, match=r"input 'os' \(optional\(seq\(tensor\(float\)\)\)\): expected a list"):
        opt_sess.run(None, {"o": None, "os": a})
    with pytest.raises(ort.InvalidArgument, match=r"input 'o': expected optional\(tensor\(float\)\), got tensor\(int64\)"):
        opt_sess.run(None, {"o": np.ones(2, np.int64), "os": None})

    tensor_sess = ort.InferenceSession(sy_models.save(sy_models.identity_model(1, shape=(2,)), tmp_path / "id.onnx"))
    with pytest.raises(ort.InvalidArgument, match=r"input 'x' \(tensor\(float\)\): got a list of arrays, which is a "
                                                  r"sequence; give one numpy array"):
        tensor_sess.run(None, {"x": [a, a]})
    with pytest.raises(ort.InvalidArgument, match=r"input 'x' \(tensor\(float\)\): got None"):
        tensor_sess.run(None, {"x": None})


def test_io_binding_takes_lists_and_none_and_returns_lists(seq_sess, opt_sess):
    a = np.array([1, 2], np.float32)
    b = np.array([3], np.float32)
    binding = seq_sess.io_binding()
    binding.bind_cpu_input("s", [a, b])
    binding.bind_output("s_out")
    binding.bind_output("parts", "cpu")
    a[0] = 100  # bound inputs are copies, as for arrays
    seq_sess.run_with_iobinding(binding)
    s_out, parts = binding.copy_outputs_to_cpu()
    _assert_list_equal(s_out, [np.array([1, 2], np.float32), b])
    _assert_list_equal(parts, [np.array([v], np.float32) for v in (1, 2, 3)])
    values = binding.get_outputs()
    assert values[0].data_type() == "seq(tensor(float))"
    _assert_list_equal(values[1].numpy(), parts)

    binding = opt_sess.io_binding()
    binding.bind_cpu_input("o", None)
    binding.bind_cpu_input("os", [b])
    binding.bind_output("o_out")
    binding.bind_output("os_out")
    opt_sess.run_with_iobinding(binding)
    o_out, os_out = binding.copy_outputs_to_cpu()
    assert o_out is None
    _assert_list_equal(os_out, [b])
    assert not binding.get_outputs()[0].has_value()
    assert binding.get_outputs()[1].has_value()


def test_io_binding_refuses_containers_it_cannot_hold(seq_sess):
    binding = seq_sess.io_binding()
    with pytest.raises(ort.InvalidArgument, match="sequence or optional input is bound with bind_cpu_input"):
        binding.bind_input("s", "cpu", 0, np.float32, [2], [np.ones(2, np.float32)])
    with pytest.raises(ort.InvalidArgument, match=r"input 's' \(seq\(tensor\(float\)\)\): got None"):
        binding.bind_cpu_input("s", None)
    binding.bind_cpu_input("s", [np.ones(2, np.float32)])
    # A sequence has no bytes of its own to write into a caller's array.
    binding.bind_output("s_out", "cpu", 0, np.float32, [2], np.zeros(2, np.float32))
    with pytest.raises(ort.InvalidArgument, match=r"output 's_out' is seq\(tensor\(float\)\), which cannot be written "
                                                  r"into a bound tensor; bind it without one"):
        seq_sess.run_with_iobinding(binding)
