"""The ai.onnx.ml kernels against scikit-learn: models fitted here are written
out as ai.onnx.ml nodes with onnx.helper (a converter of our own, a few
lines per estimator), run by switchyard and compared with the estimator's
own predictions."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import switchyard as ort
import sy_models

sklearn = pytest.importorskip("sklearn")
from sklearn import datasets, ensemble, linear_model, preprocessing, svm, tree  # noqa: E402
from sklearn.impute import SimpleImputer  # noqa: E402

ML_OPSET = 3


def run_node(tmp_path, node, x, outputs, x_type=TensorProto.FLOAT, ml_opset=ML_OPSET):
    """Runs one ai.onnx.ml node on x; returns its outputs by name."""
    inputs = [helper.make_tensor_value_info("X", x_type, list(x.shape))]
    outs = [helper.make_tensor_value_info(name, elem, None) for name, elem in outputs]
    graph = helper.make_graph([node], "ml", inputs, outs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", sy_models.OPSET),
                                                    helper.make_opsetid("ai.onnx.ml", ml_opset)])
    model.ir_version = sy_models.IR_VERSION
    path = sy_models.save(model, tmp_path / "ml.onnx")
    sess = ort.InferenceSession(path)
    return sess.run(None, {"X": x})


def tree_nodes(trees, double_thresholds=False):
    """The nodes_* attributes of scikit-learn trees (x <= threshold goes
    left, the true side). scikit-learn compares float32 inputs with double
    thresholds, which only nodes_values_as_tensor carries exactly: a float
    threshold can round onto an input value and flip its side."""
    att = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_values",
                           "nodes_truenodeids", "nodes_falsenodeids")}
    for tid, est in enumerate(trees):
        tr = est.tree_
        for i in range(tr.node_count):
            leaf = tr.children_left[i] == -1
            att["nodes_treeids"].append(tid)
            att["nodes_nodeids"].append(i)
            att["nodes_featureids"].append(0 if leaf else int(tr.feature[i]))
            att["nodes_modes"].append("LEAF" if leaf else "BRANCH_LEQ")
            att["nodes_values"].append(0.0 if leaf else float(tr.threshold[i]))
            att["nodes_truenodeids"].append(0 if leaf else int(tr.children_left[i]))
            att["nodes_falsenodeids"].append(0 if leaf else int(tr.children_right[i]))
    if double_thresholds:
        values = att.pop("nodes_values")
        att["nodes_values_as_tensor"] = helper.make_tensor("v", TensorProto.DOUBLE, [len(values)], values)
    return att


def leaves_of(trees):
    """(tree id, node id, value array) of every leaf."""
    out = []
    for t, est in enumerate(trees):
        tr = est.tree_
        for i in range(tr.node_count):
            if tr.children_left[i] == -1:
                out.append((t, i, tr.value[i]))
    return out


@pytest.fixture
def regression_data():
    x, y = datasets.make_regression(n_samples=120, n_features=6, n_targets=2, random_state=0, noise=0.5)
    # Two decimals keep every split midpoint away from the float32 inputs.
    return np.round(x, 2).astype(np.float32), y


def test_random_forest_regressor(tmp_path, regression_data):
    x, y = regression_data
    rf = ensemble.RandomForestRegressor(n_estimators=7, max_depth=5, random_state=0).fit(x, y)
    att = tree_nodes(rf.estimators_, double_thresholds=True)
    tw = {"target_treeids": [], "target_nodeids": [], "target_ids": [], "target_weights": []}
    for tid, nid, value in leaves_of(rf.estimators_):
        for target in range(2):
            tw["target_treeids"].append(tid)
            tw["target_nodeids"].append(nid)
            tw["target_ids"].append(target)
            tw["target_weights"].append(float(value[target, 0]))
    node = helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain="ai.onnx.ml", n_targets=2,
                            aggregate_function="AVERAGE", **att, **tw)
    (got,) = run_node(tmp_path, node, x, [("Y", TensorProto.FLOAT)])
    np.testing.assert_allclose(got, rf.predict(x), rtol=1e-5, atol=1e-4)


def test_gradient_boosting_binary_classifier(tmp_path):
    x, y = datasets.make_classification(n_samples=150, n_features=5, random_state=1)
    x = np.round(x, 2).astype(np.float32)
    gb = ensemble.GradientBoostingClassifier(n_estimators=12, max_depth=3, random_state=0).fit(x, y)
    trees = [e[0] for e in gb.estimators_]
    att = tree_nodes(trees)
    cw = {"class_treeids": [], "class_nodeids": [], "class_ids": [], "class_weights": []}
    for tid, nid, value in leaves_of(trees):
        cw["class_treeids"].append(tid)
        cw["class_nodeids"].append(nid)
        cw["class_ids"].append(0)
        cw["class_weights"].append(float(value[0, 0]) * gb.learning_rate)
    raw_trees = sum(gb.learning_rate * t.predict(x) for t in trees)
    base = float((gb.decision_function(x) - raw_trees)[0])
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "proba"], domain="ai.onnx.ml",
                            classlabels_int64s=[0, 1], base_values=[base], post_transform="LOGISTIC", **att, **cw)
    label, proba = run_node(tmp_path, node, x, [("label", TensorProto.INT64), ("proba", TensorProto.FLOAT)])
    np.testing.assert_allclose(proba, gb.predict_proba(x), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(label, gb.predict(x))


def test_random_forest_multiclass_classifier(tmp_path):
    x, y = datasets.load_iris(return_X_y=True)
    x = x.astype(np.float32)
    rf = ensemble.RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(x, y)
    att = tree_nodes(rf.estimators_, double_thresholds=True)
    cw = {"class_treeids": [], "class_nodeids": [], "class_ids": [], "class_weights": []}
    for tid, nid, value in leaves_of(rf.estimators_):
        share = value[0] / value[0].sum() / len(rf.estimators_)
        for c in range(3):
            cw["class_treeids"].append(tid)
            cw["class_nodeids"].append(nid)
            cw["class_ids"].append(c)
            cw["class_weights"].append(float(share[c]))
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "proba"], domain="ai.onnx.ml",
                            classlabels_int64s=[10, 11, 12], **att, **cw)
    label, proba = run_node(tmp_path, node, x, [("label", TensorProto.INT64), ("proba", TensorProto.FLOAT)])
    np.testing.assert_allclose(proba, rf.predict_proba(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(label, rf.predict(x) + 10)


def test_tree_ensemble_v5_matches_a_decision_tree(tmp_path, regression_data):
    x, y = regression_data
    dt = tree.DecisionTreeRegressor(max_depth=6, random_state=0).fit(x, y[:, 0])
    tr = dt.tree_
    # v5 keeps leaves apart: branch i of the tree is node position[i], leaf i leaf position[i].
    branches = [i for i in range(tr.node_count) if tr.children_left[i] != -1]
    leaves = [i for i in range(tr.node_count) if tr.children_left[i] == -1]
    position = {i: k for k, i in enumerate(branches)}
    position.update({i: k for k, i in enumerate(leaves)})
    is_leaf = {i: int(tr.children_left[i] == -1) for i in range(tr.node_count)}
    left = [int(tr.children_left[i]) for i in branches]
    right = [int(tr.children_right[i]) for i in branches]
    node = helper.make_node(
        "TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml", n_targets=1, tree_roots=[0],
        nodes_modes=helper.make_tensor("m", TensorProto.UINT8, [len(branches)], [0] * len(branches)),
        nodes_featureids=[int(tr.feature[i]) for i in branches],
        nodes_splits=helper.make_tensor("s", TensorProto.DOUBLE, [len(branches)],
                                        [float(tr.threshold[i]) for i in branches]),
        nodes_truenodeids=[position[c] for c in left], nodes_trueleafs=[is_leaf[c] for c in left],
        nodes_falsenodeids=[position[c] for c in right], nodes_falseleafs=[is_leaf[c] for c in right],
        leaf_targetids=[0] * len(leaves),
        leaf_weights=helper.make_tensor("w", TensorProto.DOUBLE, [len(leaves)],
                                        [float(tr.value[i][0, 0]) for i in leaves]))
    (got,) = run_node(tmp_path, node, x.astype(np.float64), [("Y", TensorProto.DOUBLE)], TensorProto.DOUBLE,
                      ml_opset=5)
    np.testing.assert_allclose(got[:, 0], dt.predict(x), rtol=1e-12)


def test_logistic_regression_multinomial_and_binary(tmp_path):
    x, y = datasets.load_iris(return_X_y=True)
    x = x.astype(np.float32)
    lr = linear_model.LogisticRegression(max_iter=500).fit(x, y)
    node = helper.make_node("LinearClassifier", ["X"], ["label", "proba"], domain="ai.onnx.ml",
                            coefficients=lr.coef_.ravel().tolist(), intercepts=lr.intercept_.tolist(),
                            classlabels_ints=[0, 1, 2], post_transform="SOFTMAX")
    label, proba = run_node(tmp_path, node, x, [("label", TensorProto.INT64), ("proba", TensorProto.FLOAT)])
    np.testing.assert_allclose(proba, lr.predict_proba(x), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(label, lr.predict(x))
    binary = linear_model.LogisticRegression(max_iter=500).fit(x, (y == 2).astype(np.int64))
    node = helper.make_node("LinearClassifier", ["X"], ["label", "proba"], domain="ai.onnx.ml",
                            coefficients=binary.coef_.ravel().tolist(), intercepts=binary.intercept_.tolist(),
                            classlabels_ints=[0, 1], post_transform="LOGISTIC")
    label, proba = run_node(tmp_path, node, x, [("label", TensorProto.INT64), ("proba", TensorProto.FLOAT)])
    np.testing.assert_allclose(proba, binary.predict_proba(x), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(label, binary.predict(x))


def test_linear_regression_two_targets(tmp_path, regression_data):
    x, y = regression_data
    lr = linear_model.LinearRegression().fit(x, y)
    node = helper.make_node("LinearRegressor", ["X"], ["Y"], domain="ai.onnx.ml", targets=2,
                            coefficients=lr.coef_.ravel().tolist(), intercepts=lr.intercept_.tolist())
    (got,) = run_node(tmp_path, node, x, [("Y", TensorProto.FLOAT)])
    np.testing.assert_allclose(got, lr.predict(x), rtol=1e-4, atol=1e-3)


def svm_kernel_params(model):
    return [float(model._gamma), float(model.coef0), float(model.degree)]


def test_svr_rbf(tmp_path):
    x, y = datasets.make_regression(n_samples=80, n_features=4, random_state=3, noise=1.0)
    x = x.astype(np.float32)
    svr = svm.SVR(kernel="rbf", C=10.0, gamma=0.2).fit(x, y)
    node = helper.make_node("SVMRegressor", ["X"], ["Y"], domain="ai.onnx.ml", kernel_type="RBF",
                            kernel_params=svm_kernel_params(svr), n_supports=len(svr.support_vectors_),
                            support_vectors=svr.support_vectors_.ravel().tolist(),
                            coefficients=svr.dual_coef_.ravel().tolist(), rho=svr.intercept_.tolist())
    (got,) = run_node(tmp_path, node, x, [("Y", TensorProto.FLOAT)])
    np.testing.assert_allclose(got[:, 0], svr.predict(x), rtol=1e-4, atol=1e-3)


def test_svc_three_classes_with_probabilities(tmp_path):
    x, y = datasets.load_iris(return_X_y=True)
    x = x.astype(np.float32)
    svc = svm.SVC(kernel="rbf", gamma=0.3, probability=True, random_state=0).fit(x, y)
    node = helper.make_node("SVMClassifier", ["X"], ["label", "proba"], domain="ai.onnx.ml", kernel_type="RBF",
                            kernel_params=svm_kernel_params(svc), classlabels_ints=[0, 1, 2],
                            vectors_per_class=svc.n_support_.tolist(),
                            support_vectors=svc.support_vectors_.ravel().tolist(),
                            coefficients=svc._dual_coef_.ravel().tolist(), rho=svc._intercept_.tolist(),
                            prob_a=svc.probA_.tolist(), prob_b=svc.probB_.tolist())
    label, proba = run_node(tmp_path, node, x, [("label", TensorProto.INT64), ("proba", TensorProto.FLOAT)])
    np.testing.assert_allclose(proba, svc.predict_proba(x), rtol=1e-3, atol=1e-4)
    np.testing.assert_array_equal(label, svc.predict(x))


@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_normalizer(tmp_path, norm):
    x = np.random.default_rng(0).normal(size=(10, 4)).astype(np.float32)
    node = helper.make_node("Normalizer", ["X"], ["Y"], domain="ai.onnx.ml", norm=norm.upper())
    (got,) = run_node(tmp_path, node, x, [("Y", TensorProto.FLOAT)])
    np.testing.assert_allclose(got, preprocessing.Normalizer(norm=norm).fit_transform(x), rtol=1e-5, atol=1e-6)


def test_standard_scaler_binarizer_and_imputer(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.normal(3, 2, size=(20, 3)).astype(np.float32)
    scaler = preprocessing.StandardScaler().fit(x)
    node = helper.make_node("Scaler", ["X"], ["Y"], domain="ai.onnx.ml", offset=scaler.mean_.tolist(),
                            scale=(1 / scaler.scale_).tolist())
    (got,) = run_node(tmp_path, node, x, [("Y", TensorProto.FLOAT)])
    np.testing.assert_allclose(got, scaler.transform(x), rtol=1e-5, atol=1e-5)

    node = helper.make_node("Binarizer", ["X"], ["Y"], domain="ai.onnx.ml", threshold=3.0)
    (got,) = run_node(tmp_path, node, x, [("Y", TensorProto.FLOAT)])
    np.testing.assert_array_equal(got, preprocessing.Binarizer(threshold=3.0).fit_transform(x))

    holes = x.copy()
    holes[rng.random(holes.shape) < 0.2] = np.nan
    imputer = SimpleImputer(strategy="mean").fit(holes)
    node = helper.make_node("Imputer", ["X"], ["Y"], domain="ai.onnx.ml",
                            imputed_value_floats=imputer.statistics_.tolist(), replaced_value_float=float("nan"))
    (got,) = run_node(tmp_path, node, holes, [("Y", TensorProto.FLOAT)])
    np.testing.assert_allclose(got, imputer.transform(holes), rtol=1e-6)


def test_one_hot_encoder(tmp_path):
    x = np.array([[3], [1], [3], [2]], dtype=np.int64)
    enc = preprocessing.OneHotEncoder().fit(x)
    node = helper.make_node("OneHotEncoder", ["X"], ["Y"], domain="ai.onnx.ml",
                            cats_int64s=enc.categories_[0].tolist())
    (got,) = run_node(tmp_path, node, x, [("Y", TensorProto.FLOAT)], TensorProto.INT64)
    np.testing.assert_array_equal(got[:, 0, :], enc.transform(x).toarray())
