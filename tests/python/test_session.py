"""Sessions: creation, metadata, run, providers, options, profiling."""

import json
import os
import pathlib

import numpy as np
import pytest

import switchyard as ort
import sy_models


def feeds(n=4, seed=1):
    rng = np.random.default_rng(seed)
    return {"X": rng.standard_normal((n, 3)).astype(np.float32), "Y": rng.standard_normal((n, 3)).astype(np.float32)}


# ---- module functions ---------------------------------------------------------


def test_module_functions():
    assert "CPUExecutionProvider" in ort.get_available_providers()
    all_providers = ort.get_all_providers()
    assert "CPUExecutionProvider" in all_providers
    assert "CUDAExecutionProvider" in all_providers
    assert set(ort.get_available_providers()) <= set(all_providers)
    assert ort.get_device() == "CPU"
    assert ort.__version__ == ort.get_version_string()
    assert ort.__version__.count(".") == 2


def test_error_hierarchy():
    names = ["Fail", "InvalidArgument", "NoSuchFile", "NoModel", "EngineError", "RuntimeException",
             "InvalidProtobuf", "ModelLoaded", "NotImplemented", "InvalidGraph", "EPFail"]
    assert issubclass(ort.Error, RuntimeError)
    for name in names:
        cls = getattr(ort, name)
        assert issubclass(cls, ort.Error), name
        assert cls is getattr(ort.capi.onnxruntime_pybind11_state, name)
    assert issubclass(ort.MissingInput, ort.InvalidArgument)
    assert issubclass(ort.MissingInput, ValueError)


# ---- creation and metadata -----------------------------------------------------


def test_from_path_bytes_and_pathlib(add_mul_path):
    f = feeds()
    expected = [f["X"] + f["Y"], f["X"] * f["Y"]]
    with open(add_mul_path, "rb") as fh:
        data = fh.read()
    for source in (add_mul_path, pathlib.Path(add_mul_path), data, bytearray(data)):
        sess = ort.InferenceSession(source)
        out = sess.run(None, f)
        assert len(out) == 2
        np.testing.assert_array_equal(out[0], expected[0])
        np.testing.assert_array_equal(out[1], expected[1])


def test_bad_source_type():
    with pytest.raises(TypeError, match="Unable to load from type"):
        ort.InferenceSession(42)


def test_inputs_outputs(add_mul_path):
    sess = ort.InferenceSession(add_mul_path)
    ins = sess.get_inputs()
    assert [i.name for i in ins] == ["X", "Y"]
    assert ins[0].type == "tensor(float)"
    assert ins[0].shape == ["N", 3]
    assert [o.name for o in sess.get_outputs()] == ["Z", "W"]
    assert sess.get_outputs()[1].shape == ["N", 3]
    assert "NodeArg(name='X', type='tensor(float)', shape=['N', 3])" == repr(ins[0])
    assert sess.get_overridable_initializers() == []


def test_unknown_dims(tmp_path):
    sess = ort.InferenceSession(sy_models.save(sy_models.unknown_dims_model(), tmp_path / "m.onnx"))
    assert sess.get_inputs()[0].shape == [2, "batch", None]
    x = np.array([[[-1.0, 2.0]], [[3.0, -4.0]]], np.float32)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], np.maximum(x, 0))


def test_metadata(add_mul_path):
    meta = ort.InferenceSession(add_mul_path).get_modelmeta()
    assert meta.producer_name == "switchyard-tests"
    assert meta.producer_version == "1.2"
    assert meta.graph_name == "add_mul"
    assert meta.domain == "ai.switchyard.test"
    assert meta.description == "a model for the python tests"
    assert meta.graph_description == "adds and multiplies"
    assert meta.version == 7
    assert meta.custom_metadata_map == {"author": "tests", "purpose": "metadata"}
    assert meta.opset_imports == {"": 17}
    assert meta.ir_version == 8


def test_overridable_initializers(tmp_path):
    model, b = sy_models.overridable_model()
    sess = ort.InferenceSession(sy_models.save(model, tmp_path / "o.onnx"))
    assert [i.name for i in sess.get_inputs()] == ["x"]
    over = sess.get_overridable_initializers()
    assert [(o.name, o.type, o.shape) for o in over] == [("B", "tensor(float)", [3])]
    x = np.array([10.0, 20.0, 30.0], np.float32)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], x + b)
    other = np.array([-1.0, -2.0, -3.0], np.float32)
    np.testing.assert_array_equal(sess.run(None, {"x": x, "B": other})[0], x + other)


# ---- run ------------------------------------------------------------------------


def test_run_named_outputs(add_mul_path):
    sess = ort.InferenceSession(add_mul_path)
    f = feeds()
    (w,) = sess.run(["W"], f)
    np.testing.assert_array_equal(w, f["X"] * f["Y"])
    w, z = sess.run(["W", "Z"], f)
    np.testing.assert_array_equal(z, f["X"] + f["Y"])
    np.testing.assert_array_equal(w, f["X"] * f["Y"])
    assert len(sess.run([], f)) == 2
    with pytest.raises(ort.InvalidArgument, match="unknown output 'nope'"):
        sess.run(["nope"], f)


def test_outputs_own_their_memory(add_mul_path):
    sess = ort.InferenceSession(add_mul_path)
    f = feeds()
    z, w = sess.run(None, f)
    del sess
    assert z.flags.writeable and z.flags.c_contiguous
    z += 1  # the array is ours to modify
    np.testing.assert_array_equal(z, f["X"] + f["Y"] + 1)
    np.testing.assert_array_equal(w, f["X"] * f["Y"])


def test_symbolic_batch(add_mul_path):
    sess = ort.InferenceSession(add_mul_path)
    for n in (1, 5, 0):
        f = feeds(n)
        z, _ = sess.run(None, f)
        assert z.shape == (n, 3)
        np.testing.assert_array_equal(z, f["X"] + f["Y"])


def test_run_options(add_mul_path):
    ro = ort.RunOptions()
    assert ro.log_severity_level == 2
    assert ro.terminate is False
    ro.run_tag = "tagged"
    assert ro.logid == "tagged"
    ro.log_severity_level = 3
    ro.add_run_config_entry("k", "v")
    assert ro.get_run_config_entry("k") == "v"
    with pytest.raises(ort.Fail):
        ro.get_run_config_entry("missing")
    with pytest.raises(ValueError):
        ro.log_severity_level = 7
    sess = ort.InferenceSession(add_mul_path)
    f = feeds()
    np.testing.assert_array_equal(sess.run(["Z"], f, ro)[0], f["X"] + f["Y"])
    np.testing.assert_array_equal(sess.run(["Z"], f, run_options=ro)[0], f["X"] + f["Y"])


# ---- providers ------------------------------------------------------------------


@pytest.mark.parametrize("providers, provider_options", [
    (None, None),
    (["CPUExecutionProvider"], None),
    (["cpu"], None),
    ([("CPUExecutionProvider", {})], None),
    ([("cpu", {})], None),
    (["CPUExecutionProvider"], [{}]),
])
def test_providers_forms(add_mul_path, providers, provider_options):
    sess = ort.InferenceSession(add_mul_path, providers=providers, provider_options=provider_options)
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert sess.get_provider_options() == {"CPUExecutionProvider": {}}
    f = feeds()
    np.testing.assert_array_equal(sess.run(["Z"], f)[0], f["X"] + f["Y"])


def test_providers_argument_errors(add_mul_path):
    with pytest.raises(ValueError, match="same length"):
        ort.InferenceSession(add_mul_path, providers=["cpu"], provider_options=[{}, {}])
    with pytest.raises(ValueError, match="strings or"):
        ort.InferenceSession(add_mul_path, providers=[("cpu",)])
    with pytest.raises(ValueError, match="sequence"):
        ort.InferenceSession(add_mul_path, providers="CPUExecutionProvider")


def test_unknown_provider(add_mul_path):
    with pytest.raises(ort.InvalidArgument, match="unknown execution provider 'CUDAExecutonProvider'.*CUDA"):
        ort.InferenceSession(add_mul_path, providers=["CUDAExecutonProvider"])


def test_cpu_rejects_options(add_mul_path):
    with pytest.raises(ort.InvalidArgument, match="unknown option .arena.; accepted: none"):
        ort.InferenceSession(add_mul_path, providers=[("CPUExecutionProvider", {"arena": 1})])


def test_duplicate_provider_warns(add_mul_path):
    with pytest.warns(UserWarning, match="Duplicate provider"):
        sess = ort.InferenceSession(add_mul_path, providers=["cpu", "cpu"])
    assert sess.get_providers() == ["CPUExecutionProvider"]


def unavailable_provider():
    missing = [p for p in ort.get_all_providers() if p not in ort.get_available_providers()]
    if not missing:
        pytest.skip("every provider is available here")
    return "CUDAExecutionProvider" if "CUDAExecutionProvider" in missing else missing[0]


def test_unavailable_provider_falls_back_loudly(add_mul_path, capfd):
    name = unavailable_provider()
    sess = ort.InferenceSession(add_mul_path, providers=[name, "CPUExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert sess.get_requested_providers() == [name, "CPUExecutionProvider"]
    assert name in capfd.readouterr().err  # the warning names it
    f = feeds()
    np.testing.assert_array_equal(sess.run(["Z"], f)[0], f["X"] + f["Y"])
    for row in sess.get_assignment():
        assert row["provider"] == "CPUExecutionProvider"
        assert [d[0] for d in row["declined"]] == [name]
        assert row["declined"][0][1]  # with a reason
    assert name in sess.get_assignment_report()


def test_strict_fallback(add_mul_path, monkeypatch):
    name = unavailable_provider()
    for kwargs in ({"fallback": "error"},):
        with pytest.raises(ort.Error, match=name):
            ort.InferenceSession(add_mul_path, providers=[name], **kwargs)
    so = ort.SessionOptions()
    so.fallback_policy = "error"
    with pytest.raises(ort.Error, match="not available"):
        ort.InferenceSession(add_mul_path, so, providers=[name])
    # 'allow' is quiet and runs on CPU.
    sess = ort.InferenceSession(add_mul_path, providers=[name], fallback="allow")
    assert sess.get_providers() == ["CPUExecutionProvider"]
    # disable_fallback() recreates the session under the strict policy.
    with pytest.raises(ort.Error, match=name):
        sess.disable_fallback()
    sess.enable_fallback()
    assert sess.get_providers() == ["CPUExecutionProvider"]
    monkeypatch.setenv("SWITCHYARD_STRICT", "1")
    with pytest.raises(ort.Error, match=name):
        ort.InferenceSession(add_mul_path, providers=[name])
    with pytest.raises(ValueError, match="fallback"):
        ort.InferenceSession(add_mul_path, fallback="sometimes")


def test_set_providers(add_mul_path):
    sess = ort.InferenceSession(add_mul_path, providers=["cpu"])
    sess.set_providers(["CPUExecutionProvider"], [{}])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    sess.set_providers()
    assert sess.get_providers() == ["CPUExecutionProvider"]
    with pytest.raises(ort.InvalidArgument):
        sess.set_providers(["nosuch"])
    f = feeds()  # a failed set_providers leaves the session usable
    np.testing.assert_array_equal(sess.run(["Z"], f)[0], f["X"] + f["Y"])


def test_assignment(add_mul_path):
    sess = ort.InferenceSession(add_mul_path)
    rows = sess.get_assignment()
    assert sorted((r["node"], r["op"], r["provider"]) for r in rows) == [
        ("add", "Add", "CPUExecutionProvider"), ("mul", "Mul", "CPUExecutionProvider")]
    assert all(r["declined"] == [] for r in rows)
    report = sess.get_assignment_report()
    assert "add (Add) -> CPUExecutionProvider" in report


# ---- options --------------------------------------------------------------------


def test_session_options_fields():
    so = ort.SessionOptions()
    assert so.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert so.execution_mode == ort.ExecutionMode.ORT_SEQUENTIAL
    assert so.intra_op_num_threads == 0
    assert so.log_severity_level == 2
    assert so.enable_profiling is False
    assert so.fallback_policy == "warn"
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 2
    so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    so.log_severity_level = 3
    so.log_verbosity_level = 1
    so.logid = "mine"
    so.optimized_model_filepath = "/tmp/x.onnx"
    so.enable_mem_pattern = False
    so.enable_cpu_mem_arena = False
    so.fallback_policy = "allow"
    so.add_session_config_entry("session.key", "value")
    assert so.get_session_config_entry("session.key") == "value"
    with pytest.raises(ort.Fail, match="missing"):
        so.get_session_config_entry("missing")
    with pytest.raises(ValueError):
        so.log_severity_level = 5
    with pytest.raises(ValueError):
        so.intra_op_num_threads = -1
    with pytest.raises(ValueError):
        so.fallback_policy = "loud"
    with pytest.raises(TypeError):
        so.graph_optimization_level = "all"
    assert (so.intra_op_num_threads, so.inter_op_num_threads, so.logid, so.fallback_policy) == (1, 2, "mine", "allow")
    assert int(ort.GraphOptimizationLevel.ORT_ENABLE_ALL) == 99
    assert int(ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED) == 2


@pytest.mark.parametrize("level", [ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
                                   ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, ort.GraphOptimizationLevel.ORT_ENABLE_ALL])
def test_optimization_levels_same_result(dense, level):
    path, w, b = dense
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, so)
    x = np.random.default_rng(3).standard_normal((5, 64)).astype(np.float32)
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], np.maximum(x @ w + b, 0), rtol=1e-4, atol=1e-4)


def test_session_options_are_copied(add_mul_path):
    so = ort.SessionOptions()
    so.logid = "first"
    sess = ort.InferenceSession(add_mul_path, sess_options=so)
    so.logid = "changed later"
    assert sess.get_session_options().logid == "first"


# ---- profiling ------------------------------------------------------------------


def test_profiling_writes_trace(add_mul_path, tmp_path):
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "prof")
    sess = ort.InferenceSession(add_mul_path, so)
    for _ in range(3):
        sess.run(None, feeds())
    path = sess.end_profiling()
    assert path.startswith(str(tmp_path / "prof"))
    assert os.path.exists(path)
    with open(path) as fh:
        events = json.load(fh)
    ops = [e["args"]["op_name"] for e in events]
    assert ops.count("Add") == 3 and ops.count("Mul") == 3
    assert all(e["args"]["provider"] == "CPUExecutionProvider" for e in events)


def test_profiling_off_returns_empty(add_mul_path):
    assert ort.InferenceSession(add_mul_path).end_profiling() == ""


def test_default_logger_severity(add_mul_path, capfd):
    name = unavailable_provider()
    try:
        ort.set_default_logger_severity(3)
        assert ort.SessionOptions().log_severity_level == 3
        ort.InferenceSession(add_mul_path, providers=[name])  # its warning is below ERROR
        assert name not in capfd.readouterr().err
        with pytest.raises(ValueError):
            ort.set_default_logger_severity(9)
    finally:
        ort.set_default_logger_severity(2)
    assert ort.SessionOptions().log_severity_level == 2
    ort.InferenceSession(add_mul_path, providers=[name])
    assert name in capfd.readouterr().err
    ort.set_default_logger_verbosity(1)


def test_capi_aliases():
    from switchyard.capi import _pybind_state
    from switchyard.capi.onnxruntime_pybind11_state import InvalidArgument, SessionOptions
    assert _pybind_state.InvalidArgument is InvalidArgument is ort.InvalidArgument
    assert SessionOptions is ort.SessionOptions


# ---- doctor and placement ---------------------------------------------------------


def test_doctor():
    report = ort.doctor()
    assert [p.name for p in report] == ort.get_all_providers()
    cpu = report[-1]
    assert (cpu.name, cpu.short_name, cpu.built, cpu.loadable, cpu.usable) == (
        "CPUExecutionProvider", "cpu", True, True, True)
    assert cpu.devices and "host CPU" in cpu.devices[0]
    assert report.usable() == ort.get_available_providers()
    for p in report:
        if not p.usable:
            assert p.reason and p.fix, p.name
        for check in p.checks:
            assert isinstance(check.ok, bool) and check.what and check.detail
    assert "CPUExecutionProvider (cpu): READY" in str(report)


def test_placement(add_mul_path):
    sess = ort.InferenceSession(add_mul_path)
    assert sess.get_placement() == {
        "partitions": 1, "partition_providers": ["CPUExecutionProvider"], "partition_sizes": [2],
        "copies_per_run": 0, "constant_copies": 0, "nodes_per_provider": {"CPUExecutionProvider": 2}}


def test_placement_limits(add_mul_path, capfd):
    so = ort.SessionOptions()
    assert (so.require_full_placement, so.max_partitions, so.min_partition_size, so.max_copies) == (False, 0, 0, -1)
    so.max_partitions = 1
    so.max_copies = 0
    so.min_partition_size = 1
    ort.InferenceSession(add_mul_path, so)  # one CPU partition, no copies: within the limits
    with pytest.raises(ValueError):
        so.max_copies = -2
    name = unavailable_provider()
    so.require_full_placement = True
    # Nothing runs on the first provider listed: a warning unless strict.
    sess = ort.InferenceSession(add_mul_path, so, providers=[name], fallback="allow")
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert "placement limit broken" in capfd.readouterr().err
