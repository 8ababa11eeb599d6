"""What a run() call costs from Python beyond the same Session::run in C++.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py

A tiny model (one Add over float[1,16]) so that the model's own time is
small next to the call overhead. Three timings per call, best of several
repeats:
  c++      Session::run looped in C++ (feeds converted once)
  binding  the compiled _Session.run from Python (dict -> tensors, GIL
           release, tensors -> numpy)
  python   InferenceSession.run, what users call
"""

import argparse
import time

import numpy as np
from onnx import TensorProto, helper

import switchyard as ort


def tiny_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 16])
    graph = helper.make_graph([helper.make_node("Add", ["x", "y"], ["z"])], "tiny", [x, y], [z])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def best_us(fn, iterations, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(iterations):
            fn()
        best = min(best, (time.perf_counter() - start) / iterations * 1e6)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(tiny_model(), so)
    feeds = {"x": np.ones((1, 16), np.float32), "y": np.ones((1, 16), np.float32)}
    np.testing.assert_array_equal(sess.run(None, feeds)[0], np.full((1, 16), 2, np.float32))

    cpp = min(sess._sess._bench_run(feeds, args.iterations) for _ in range(args.repeats))
    binding = best_us(lambda: sess._sess.run(None, feeds, None), args.iterations, args.repeats)
    python = best_us(lambda: sess.run(None, feeds), args.iterations, args.repeats)
    print(f"switchyard {ort.__version__}, tiny Add model, {args.iterations} calls x {args.repeats} repeats (best)")
    print(f"  c++ Session::run            {cpp:8.2f} us/call")
    print(f"  _Session.run (binding)      {binding:8.2f} us/call  (+{binding - cpp:.2f})")
    print(f"  InferenceSession.run        {python:8.2f} us/call  (+{python - cpp:.2f} over C++)")


if __name__ == "__main__":
    main()
