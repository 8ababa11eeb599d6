"""A gradient-boosted regressor as one ai.onnx.ml TreeEnsembleRegressor:
scikit-learn fits 300 trees of depth 6 on synthetic data with 20 features,
and this writes them out with onnx.helper (the nodes_* and target_*
attributes sklearn-onnx would write), with a batch of 1000 rows as the
input and scikit-learn's own predictions as the expected output.

Not a PyTorch model: export_all.py calls write() instead of make().
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper


def tree_attributes(trees, scale):
    """The nodes_* and target_* attributes of fitted sklearn trees (x <=
    threshold goes to the true branch), each leaf's value times `scale`."""
    att = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_values",
                           "nodes_truenodeids", "nodes_falsenodeids", "target_treeids", "target_nodeids",
                           "target_ids", "target_weights")}
    for tid, t in enumerate(trees):
        t = t.tree_
        for nid in range(t.node_count):
            leaf = t.children_left[nid] < 0
            att["nodes_treeids"].append(tid)
            att["nodes_nodeids"].append(nid)
            att["nodes_featureids"].append(0 if leaf else int(t.feature[nid]))
            att["nodes_modes"].append("LEAF" if leaf else "BRANCH_LEQ")
            att["nodes_values"].append(0.0 if leaf else float(t.threshold[nid]))
            att["nodes_truenodeids"].append(0 if leaf else int(t.children_left[nid]))
            att["nodes_falsenodeids"].append(0 if leaf else int(t.children_right[nid]))
            if leaf:
                att["target_treeids"].append(tid)
                att["target_nodeids"].append(nid)
                att["target_ids"].append(0)
                att["target_weights"].append(float(t.value[nid][0][0]) * scale)
    return att


def write(out_dir: str, small: bool = False, seed: int = 0) -> dict:
    from sklearn import datasets, ensemble

    trees, rows = (20, 64) if small else (300, 1000)
    x, y = datasets.make_regression(n_samples=5000, n_features=20, noise=5.0, random_state=seed)
    x = x.astype(np.float32)
    model = ensemble.GradientBoostingRegressor(n_estimators=trees, max_depth=6, learning_rate=0.1, random_state=seed)
    model.fit(x, y)
    att = tree_attributes([e[0] for e in model.estimators_], model.learning_rate)
    base = float(model.init_.constant_[0][0]) if hasattr(model.init_, "constant_") else float(np.mean(y))
    node = helper.make_node("TreeEnsembleRegressor", ["input"], ["variable"], domain="ai.onnx.ml", n_targets=1,
                            base_values=[base], post_transform="NONE", aggregate_function="SUM", **att)
    graph = helper.make_graph([node], "tree_ensemble",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 20])],
                              [helper.make_tensor_value_info("variable", TensorProto.FLOAT, ["batch", 1])])
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                         helper.make_opsetid("ai.onnx.ml", 3)])
    onnx_model.ir_version = 8
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "tree_ensemble.onnx")
    onnx.save(onnx_model, path)
    batch = np.random.default_rng(seed).standard_normal((rows, 20)).astype(np.float32)
    for kind, name, array in (("inputs", "input", batch),
                              ("expected", "variable", model.predict(batch).astype(np.float32).reshape(rows, 1))):
        folder = os.path.join(out_dir, f"tree_ensemble.{kind}")
        os.makedirs(folder, exist_ok=True)
        np.save(os.path.join(folder, name + ".npy"), array)
    return {"name": "tree_ensemble", "path": path, "bytes": os.path.getsize(path),
            "ops": {"TreeEnsembleRegressor": 1}}
