"""Shared pieces of the model exporters: the spec each model module returns,
ONNX export, and the reference inputs/outputs saved beside each model."""

import dataclasses
import os
import time
from collections import Counter
from typing import Dict, List

import numpy as np
import torch

OPSET = 17


@dataclasses.dataclass
class ModelSpec:
    name: str
    module: torch.nn.Module
    # Input name -> example tensor, in the order forward() takes them.
    inputs: Dict[str, torch.Tensor]
    output_names: List[str]
    # ONNX names of the dimensions that stay symbolic (batch, sequence).
    dynamic_axes: Dict[str, Dict[int, str]]
    # Export through torch.jit.script, so that Python control flow on the
    # inputs becomes ONNX If/Loop instead of the path one trace took.
    script: bool = False


def init_transformer_weights(module: torch.nn.Module, std: float = 0.02) -> None:
    """BERT/GPT-2 style initialisation: N(0, std) weights, zero biases.

    torch's defaults (N(0, 1) embeddings) saturate the attention softmax of a
    12-layer stack, which would make the reference a poor test of numerics.
    """
    for m in module.modules():
        if isinstance(m, torch.nn.Linear):
            torch.nn.init.normal_(m.weight, std=std)
            if m.bias is not None:
                torch.nn.init.zeros_(m.bias)
        elif isinstance(m, torch.nn.Embedding):
            torch.nn.init.normal_(m.weight, std=std)
        elif isinstance(m, torch.nn.LayerNorm):
            torch.nn.init.ones_(m.weight)
            torch.nn.init.zeros_(m.bias)


def export(spec: ModelSpec, out_dir: str) -> dict:
    """Exports spec to out_dir/<name>.onnx and saves its reference data:
    out_dir/<name>.inputs/<input>.npy and out_dir/<name>.expected/<output>.npy.
    Returns a summary (times, sizes, op histogram)."""
    os.makedirs(out_dir, exist_ok=True)
    model_path = os.path.join(out_dir, spec.name + ".onnx")
    module = spec.module.eval()
    args = tuple(spec.inputs.values())

    with torch.no_grad():
        expected = module(*args)
    if isinstance(expected, torch.Tensor):
        expected = (expected,)
    if len(expected) != len(spec.output_names):
        raise RuntimeError(f"{spec.name}: forward returned {len(expected)} outputs, "
                           f"expected {len(spec.output_names)} ({spec.output_names})")

    start = time.perf_counter()
    torch.onnx.export(
        torch.jit.script(module) if spec.script else module,
        args,
        model_path,
        input_names=list(spec.inputs.keys()),
        output_names=spec.output_names,
        dynamic_axes=spec.dynamic_axes,
        opset_version=OPSET,
        do_constant_folding=True,
    )
    export_seconds = time.perf_counter() - start

    _save_arrays(os.path.join(out_dir, spec.name + ".inputs"),
                 {k: v.numpy() for k, v in spec.inputs.items()})
    _save_arrays(os.path.join(out_dir, spec.name + ".expected"),
                 {k: v.detach().numpy() for k, v in zip(spec.output_names, expected)})

    return {
        "name": spec.name,
        "path": model_path,
        "export_seconds": export_seconds,
        "bytes": os.path.getsize(model_path),
        "ops": op_histogram(model_path),
    }


def _save_arrays(folder: str, arrays: Dict[str, np.ndarray]) -> None:
    os.makedirs(folder, exist_ok=True)
    # Stale files from an earlier export with other names would be compared
    # against outputs that no longer exist.
    for old in os.listdir(folder):
        if old.endswith(".npy"):
            os.remove(os.path.join(folder, old))
    for name, array in arrays.items():
        # The C++ loader reads C-order little-endian arrays only.
        # (np.ascontiguousarray would make a 0-d array 1-d.)
        np.save(os.path.join(folder, name + ".npy"), np.require(array, requirements="C"))


def op_histogram(model_path: str) -> Counter:
    import onnx  # only needed here; keeps `--help` fast

    model = onnx.load(model_path)
    onnx.checker.check_model(model)
    counts: Counter = Counter()

    def visit(graph):
        for node in graph.node:
            counts[node.op_type] += 1
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    visit(attr.g)
                for g in attr.graphs:
                    visit(g)

    visit(model.graph)
    return counts
