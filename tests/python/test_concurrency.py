"""Threads: one session run from 8 Python threads, the GIL released during
run(), and RunOptions.terminate set from another thread."""

import threading
import time

import numpy as np
import pytest

import switchyard as ort
import sy_models


def test_eight_threads_one_session(dense):
    path, w, b = dense
    sess = ort.InferenceSession(path)
    errors = []
    checked = [0] * 8

    def worker(k):
        rng = np.random.default_rng(100 + k)
        try:
            for _ in range(25):
                x = rng.standard_normal((int(rng.integers(1, 16)), 64)).astype(np.float32)
                (y,) = sess.run(None, {"x": x})
                np.testing.assert_allclose(y, np.maximum(x @ w + b, 0), rtol=1e-4, atol=1e-4)
                checked[k] += 1
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert checked == [25] * 8


@pytest.fixture(scope="module")
def slow_session(tmp_path_factory):
    """A session whose run takes at least 0.2 s on one thread: the chain
    grows until it does, since kernels get faster."""
    folder = tmp_path_factory.mktemp("slow")
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    x = np.random.default_rng(0).standard_normal((192, 192)).astype(np.float32)
    nodes = 400
    for _ in range(4):
        path = sy_models.save(sy_models.matmul_chain_model(nodes=nodes, size=192), folder / f"chain{nodes}.onnx")
        sess = ort.InferenceSession(path, so)
        sess.run(None, {"x": x})  # warm up
        start = time.perf_counter()
        sess.run(None, {"x": x})
        seconds = time.perf_counter() - start
        if seconds >= 0.2:
            break
        nodes = int(nodes * min(8.0, 0.3 / max(seconds, 1e-3)))
    return sess, x, seconds


def test_gil_released_during_run(slow_session):
    sess, x, seconds = slow_session
    assert seconds > 0.1, f"the model ran in {seconds:.3f} s; make it slower"
    done = threading.Event()

    def run():
        sess.run(None, {"x": x})
        done.set()

    t = threading.Thread(target=run)
    t.start()
    ticks = 0
    while not done.is_set():
        ticks += 1  # Python code runs here only if run() let go of the GIL
        time.sleep(0.002)
    t.join()
    assert ticks >= 10, f"only {ticks} ticks in a {seconds:.3f} s run"


def test_terminate_before_run(slow_session):
    sess, x, _ = slow_session
    ro = ort.RunOptions()
    ro.terminate = True
    ro.run_tag = "stopped"
    with pytest.raises(ort.Fail, match="run 'stopped' terminated by RunOptions.terminate"):
        sess.run(None, {"x": x}, ro)


def test_terminate_from_another_thread(slow_session):
    sess, x, seconds = slow_session
    ro = ort.RunOptions()
    outcome = {}

    def run():
        try:
            sess.run(None, {"x": x}, ro)
            outcome["result"] = "finished"
        except ort.Fail as e:
            outcome["result"] = str(e)

    t = threading.Thread(target=run)
    t.start()
    time.sleep(min(0.05, seconds / 4))
    ro.terminate = True
    t.join()
    assert "terminated by RunOptions.terminate" in outcome["result"]
    # The session still works once the flag is cleared.
    ro.terminate = False
    (y,) = sess.run(None, {"x": x}, ro)
    assert y.shape == (192, 192)
