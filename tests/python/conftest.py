import pathlib

import pytest

import sy_models

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def add_mul_path(tmp_path):
    return sy_models.save(sy_models.add_mul_model(), tmp_path / "add_mul.onnx")


@pytest.fixture
def dense(tmp_path):
    model, w, b = sy_models.dense_model()
    return sy_models.save(model, tmp_path / "dense.onnx"), w, b


@pytest.fixture(autouse=True)
def _not_strict(monkeypatch):
    # The tests of the default (warn) policy must not inherit a strict shell.
    monkeypatch.delenv("SWITCHYARD_STRICT", raising=False)
