"""Small ONNX models built in the tests with the onnx package (opset 17, IR 8)."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8


def make_model(graph, check=True, **kwargs):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], **kwargs)
    model.ir_version = IR_VERSION
    if check:
        onnx.checker.check_model(model)
    return model


def save(model, path):
    onnx.save(model, str(path))
    return str(path)


def add_mul_model():
    """Z = X + Y, W = X * Y over float [N, 3], with metadata set."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 3])
    z = helper.make_tensor_value_info("Z", TensorProto.FLOAT, ["N", 3])
    w = helper.make_tensor_value_info("W", TensorProto.FLOAT, ["N", 3])
    graph = helper.make_graph(
        [helper.make_node("Add", ["X", "Y"], ["Z"], name="add"), helper.make_node("Mul", ["X", "Y"], ["W"], name="mul")],
        "add_mul", [x, y], [z, w], doc_string="adds and multiplies")
    model = make_model(graph, producer_name="switchyard-tests", producer_version="1.2", domain="ai.switchyard.test",
                       model_version=7, doc_string="a model for the python tests")
    helper.set_model_props(model, {"author": "tests", "purpose": "metadata"})
    return model


def identity_model(elem_type, shape=(2, 3)):
    x = helper.make_tensor_value_info("x", elem_type, list(shape))
    y = helper.make_tensor_value_info("y", elem_type, list(shape))
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"], name="id")], "identity", [x], [y])
    return make_model(graph)


def unknown_dims_model():
    """Relu over an input whose dims are: known, symbolic, unknown; and an
    output without shape information."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "batch", None])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "dims", [x], [y])
    # onnx's checker wants a shape on every graph output; ONNX itself does not.
    return make_model(graph, check=False)


def dense_model(rows_in=64, cols_out=32, seed=0):
    """y = relu(x @ W + B) with W, B initializers; returns (model, W, B)."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((rows_in, cols_out)).astype(np.float32)
    b = rng.standard_normal((cols_out,)).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", rows_in])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", cols_out])
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["xw"], name="matmul"),
         helper.make_node("Add", ["xw", "B"], ["xwb"], name="bias"),
         helper.make_node("Relu", ["xwb"], ["y"], name="relu")],
        "dense", [x], [y], initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    return make_model(graph), w, b


def overridable_model():
    """y = x + B where B is an initializer that is also an input."""
    b = np.array([1.0, 2.0, 3.0], np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
    b_in = helper.make_tensor_value_info("B", TensorProto.FLOAT, [3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    graph = helper.make_graph([helper.make_node("Add", ["x", "B"], ["y"], name="add")], "overridable", [x, b_in], [y],
                              initializer=[numpy_helper.from_array(b, "B")])
    return make_model(graph), b


def matmul_chain_model(nodes, size):
    """x [size, size] multiplied by the same scaled orthogonal-ish matrix
    `nodes` times: slow enough to stop midway, values stay bounded."""
    w = (np.eye(size, dtype=np.float32) * 0.5 + 0.5 / size).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [size, size])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [size, size])
    names = ["x"] + [f"t{i}" for i in range(nodes - 1)] + ["y"]
    graph_nodes = [helper.make_node("MatMul", [names[i], "W"], [names[i + 1]], name=f"mm{i}") for i in range(nodes)]
    graph = helper.make_graph(graph_nodes, "chain", [x], [y], initializer=[numpy_helper.from_array(w, "W")])
    return make_model(graph)


def _seq_info(name, elem_type=TensorProto.FLOAT):
    return helper.make_tensor_sequence_value_info(name, elem_type, None)


def _optional_info(name, inner):
    """optional(inner), where inner is a TypeProto."""
    return helper.make_value_info(name, helper.make_optional_type_proto(inner))


def sequence_model(concat=True):
    """A seq(tensor(float)) input s: s_out = Identity(s), n = SequenceLength(s);
    with `concat` also cat = ConcatFromSequence(s, axis=0) and the computed
    sequence parts = SplitToSequence(cat), one [1] piece per element (both
    fail on an empty sequence, hence the choice)."""
    nodes = [helper.make_node("Identity", ["s"], ["s_out"], name="id"),
             helper.make_node("SequenceLength", ["s"], ["n"], name="len")]
    outputs = [_seq_info("s_out"), helper.make_tensor_value_info("n", TensorProto.INT64, [])]
    if concat:
        nodes += [helper.make_node("ConcatFromSequence", ["s"], ["cat"], axis=0, name="concat"),
                  helper.make_node("SplitToSequence", ["cat"], ["parts"], name="split")]
        outputs += [helper.make_tensor_value_info("cat", TensorProto.FLOAT, [None]), _seq_info("parts")]
    graph = helper.make_graph(nodes, "sequences", [_seq_info("s")], outputs)
    return make_model(graph)


def optional_model():
    """o: optional(tensor(float)) -> has = OptionalHasElement(o), o_out = Identity(o);
    os: optional(seq(tensor(float))) -> os_out = Identity(os)."""
    tensor_type = helper.make_tensor_type_proto(TensorProto.FLOAT, None)
    seq_type = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    graph = helper.make_graph(
        [helper.make_node("OptionalHasElement", ["o"], ["has"], name="has"),
         helper.make_node("Identity", ["o"], ["o_out"], name="id_o"),
         helper.make_node("Identity", ["os"], ["os_out"], name="id_os")],
        "optionals", [_optional_info("o", tensor_type), _optional_info("os", seq_type)],
        [helper.make_tensor_value_info("has", TensorProto.BOOL, []), _optional_info("o_out", tensor_type),
         _optional_info("os_out", seq_type)])
    return make_model(graph)


def _initializers(arrays):
    return [numpy_helper.from_array(a, n) for n, a in arrays.items()]


def mlp_model(n_in=16, n_hidden=32, n_out=8, seed=0):
    """y = relu(x @ W1 + B1) @ W2 + B2 (MatMul+Add+Relu, then MatMul+Add)."""
    rng = np.random.default_rng(seed)
    arrays = {"W1": rng.standard_normal((n_in, n_hidden)) * 0.3, "B1": rng.standard_normal(n_hidden) * 0.1,
              "W2": rng.standard_normal((n_hidden, n_out)) * 0.3, "B2": rng.standard_normal(n_out) * 0.1}
    arrays = {n: a.astype(np.float32) for n, a in arrays.items()}
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", n_in])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", n_out])
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["h0"], name="fc1"),
             helper.make_node("Add", ["h0", "B1"], ["h1"], name="fc1_bias"),
             helper.make_node("Relu", ["h1"], ["h2"], name="relu1"),
             helper.make_node("MatMul", ["h2", "W2"], ["h3"], name="fc2"),
             helper.make_node("Add", ["h3", "B2"], ["y"], name="fc2_bias")]
    return make_model(helper.make_graph(nodes, "mlp", [x], [y], initializer=_initializers(arrays)))


def small_cnn_model(seed=0):
    """x [N,3,12,12] -> Conv+Relu -> Conv (stride 2) -> GlobalAveragePool ->
    Flatten -> Gemm (transB) -> y [N,10]."""
    rng = np.random.default_rng(seed)
    arrays = {"W1": rng.standard_normal((8, 3, 3, 3)) * 0.3, "B1": rng.standard_normal(8) * 0.1,
              "W2": rng.standard_normal((16, 8, 3, 3)) * 0.2, "B2": rng.standard_normal(16) * 0.1,
              "W3": rng.standard_normal((10, 16)) * 0.3, "B3": rng.standard_normal(10) * 0.1}
    arrays = {n: a.astype(np.float32) for n, a in arrays.items()}
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 12, 12])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])
    nodes = [helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "W2", "B2"], ["c2"], name="conv2", pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("GlobalAveragePool", ["c2"], ["p"], name="gap"),
             helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
             helper.make_node("Gemm", ["f", "W3", "B3"], ["y"], name="fc", transB=1)]
    return make_model(helper.make_graph(nodes, "small_cnn", [x], [y], initializer=_initializers(arrays)))
