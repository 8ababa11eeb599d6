"""A typical onnxruntime user script, kept exactly as one would write it for
onnxruntime. test_ort_script.py runs it with only its import lines changed
(onnxruntime becomes switchyard).

It builds a small classifier (MatMul, Add, Relu, MatMul, Softmax), then
inspects it, runs it, checks the numbers against numpy, and exercises the
error paths people rely on.
"""

import json
import os
import tempfile
import threading

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onnxruntime as ort
from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidArgument, NoSuchFile


def build_classifier(path, rng):
    w1 = rng.standard_normal((16, 32)).astype(np.float32)
    b1 = rng.standard_normal((32,)).astype(np.float32)
    w2 = rng.standard_normal((32, 4)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["features", "w1"], ["h0"], name="fc1"),
        helper.make_node("Add", ["h0", "b1"], ["h1"], name="fc1_bias"),
        helper.make_node("Relu", ["h1"], ["h2"], name="relu"),
        helper.make_node("MatMul", ["h2", "w2"], ["logits"], name="fc2"),
        helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "classifier",
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch_size", 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", 4]),
         helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch_size", 4])],
        initializer=[numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
                     numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, producer_name="my-exporter", opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    model.model_version = 3
    helper.set_model_props(model, {"labels": "cat,dog,bird,fish"})
    onnx.save(model, path)
    return model, (w1, b1, w2)


def reference(x, weights):
    w1, b1, w2 = weights
    logits = np.maximum(x @ w1 + b1, 0) @ w2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return logits, e / e.sum(axis=1, keepdims=True)


def main():
    print(f"runtime {ort.__version__} on {ort.get_device()}, providers: {ort.get_available_providers()}")
    rng = np.random.default_rng(42)
    with tempfile.TemporaryDirectory() as tmp:
        model_path = os.path.join(tmp, "classifier.onnx")
        model, weights = build_classifier(model_path, rng)

        sess_options = ort.SessionOptions()
        sess_options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess_options.intra_op_num_threads = 2
        sess_options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        sess_options.log_severity_level = 3
        session = ort.InferenceSession(model_path, sess_options, providers=["CPUExecutionProvider"])

        # Inspect the model.
        input_meta = session.get_inputs()[0]
        input_name = input_meta.name
        output_names = [o.name for o in session.get_outputs()]
        print("input:", input_meta.name, input_meta.type, input_meta.shape)
        print("outputs:", output_names)
        assert input_meta.type == "tensor(float)"
        assert input_meta.shape == ["batch_size", 16]
        assert output_names == ["logits", "probabilities"]
        meta = session.get_modelmeta()
        print("producer:", meta.producer_name, "version:", meta.version)
        labels = meta.custom_metadata_map["labels"].split(",")
        assert meta.producer_name == "my-exporter" and meta.version == 3 and meta.graph_name == "classifier"
        assert session.get_providers() == ["CPUExecutionProvider"]

        # Run: all outputs, then one by name, with several batch sizes.
        for batch in (1, 8, 33):
            x = rng.standard_normal((batch, 16)).astype(np.float32)
            logits, probs = session.run(None, {input_name: x})
            ref_logits, ref_probs = reference(x, weights)
            np.testing.assert_allclose(logits, ref_logits, rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(probs, ref_probs, rtol=1e-4, atol=1e-5)
            (probs_only,) = session.run(["probabilities"], {input_name: x})
            np.testing.assert_allclose(probs_only, probs, rtol=1e-6)
            print(f"batch {batch}: first prediction {labels[int(np.argmax(probs[0]))]}")

        # A session from bytes, with run options.
        session2 = ort.InferenceSession(model.SerializeToString(), providers=ort.get_available_providers())
        run_options = ort.RunOptions()
        run_options.log_severity_level = 3
        x = rng.standard_normal((4, 16)).astype(np.float32)
        out = session2.run(output_names, {input_name: x}, run_options)
        np.testing.assert_allclose(out[0], reference(x, weights)[0], rtol=1e-4, atol=1e-4)

        # Threads share one session.
        results = [None] * 4

        def worker(i):
            results[i] = session.run(["logits"], {input_name: x})[0]

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for r in results:
            np.testing.assert_allclose(r, out[0], rtol=1e-5, atol=1e-5)

        # Errors.
        try:
            session.run(None, {input_name: x.astype(np.float64)})
            raise AssertionError("float64 input accepted")
        except InvalidArgument as e:
            print("wrong type:", e)
        try:
            session.run(None, {input_name: x.reshape(4, 4, 4)})
            raise AssertionError("rank 3 input accepted")
        except InvalidArgument as e:
            print("wrong rank:", e)
        try:
            session.run(["no_such_output"], {input_name: x})
            raise AssertionError("unknown output accepted")
        except InvalidArgument as e:
            print("wrong output:", e)
        try:
            session.run(None, {"wrong_name": x})
            raise AssertionError("missing input accepted")
        except ValueError as e:
            print("missing input:", e)
        try:
            ort.InferenceSession(os.path.join(tmp, "missing.onnx"))
            raise AssertionError("missing file accepted")
        except NoSuchFile as e:
            print("missing file:", e)
        try:
            ort.InferenceSession(b"not a model")
            raise AssertionError("garbage accepted")
        except Exception as e:  # onnxruntime raises InvalidProtobuf here
            assert type(e).__name__ == "InvalidProtobuf", type(e)
        try:
            ort.InferenceSession(model_path, providers=["NotARealExecutionProvider"])
            raise AssertionError("unknown provider accepted")
        except Exception as e:  # the exact class differs between versions
            print("bad provider:", type(e).__name__)

        # Terminate: a run with the flag already set stops with Fail.
        stop = ort.RunOptions()
        stop.terminate = True
        try:
            session.run(None, {input_name: x}, stop)
            raise AssertionError("terminated run finished")
        except Fail as e:
            print("terminated:", e)

        # Providers can be changed on a live session.
        session.set_providers(["CPUExecutionProvider"], [{}])
        assert session.get_providers() == ["CPUExecutionProvider"]
        assert "CPUExecutionProvider" in session.get_provider_options()

        # Profiling.
        prof_options = ort.SessionOptions()
        prof_options.enable_profiling = True
        prof_options.profile_file_prefix = os.path.join(tmp, "classifier_profile")
        profiled = ort.InferenceSession(model_path, prof_options, providers=["CPUExecutionProvider"])
        for _ in range(5):
            profiled.run(None, {input_name: x})
        profile_file = profiled.end_profiling()
        with open(profile_file) as f:
            events = json.load(f)
        node_events = [e for e in events if e.get("cat") == "Node"]
        assert node_events, "no node events in the profile"
        print(f"profile: {len(node_events)} node events in {os.path.basename(profile_file)}")

    print("OK")


if __name__ == "__main__":
    main()
