"""Calibration: the ranges of a float model's activations over sample data.

The model runs through switchyard.InferenceSession. The tensors to
calibrate are added as extra graph outputs to a temporary copy of the model,
and the minimum and maximum of each is kept over every feed the reader gives.
"""

import abc
import copy
from enum import Enum

import numpy as np
import onnx
from onnx import TensorProto, helper


class CalibrationMethod(Enum):
    MinMax = 0
    Entropy = 1
    Percentile = 2
    Distribution = 3


class CalibrationDataReader(metaclass=abc.ABCMeta):
    """Gives the feeds calibration runs the model with: get_next() returns a
    dict {input name: numpy array}, or None when there are no more."""

    @classmethod
    def __subclasshook__(cls, subclass):
        return hasattr(subclass, "get_next") and callable(subclass.get_next) or NotImplemented

    @abc.abstractmethod
    def get_next(self) -> dict:
        raise NotImplementedError

    def __iter__(self):
        return self

    def __next__(self):
        result = self.get_next()
        if result is None:
            raise StopIteration
        return result

    def __len__(self):
        raise NotImplementedError

    def set_range(self, start_index: int, end_index: int):
        raise NotImplementedError

    def rewind(self):
        """Starts the feeds again from the first (optional: calibration
        reads them once)."""


def _check_method(calibrate_method):
    if calibrate_method != CalibrationMethod.MinMax:
        raise NotImplementedError(
            f"switchyard.quantization calibrates with CalibrationMethod.MinMax only, not {calibrate_method}; "
            "use onnxruntime's tool for entropy, percentile or distribution calibration")


def collect_min_max(model, tensor_names, data_reader, providers=None):
    """Runs model (a float ModelProto) over every feed of data_reader and
    returns {tensor name: (min, max)} for each of tensor_names that got a
    value (float32 scalars)."""
    from .. import InferenceSession  # the compiled module; imported late so the pure helpers need no build

    augmented = copy.deepcopy(model)
    graph = augmented.graph
    existing = {o.name for o in graph.output}
    added = []
    for name in tensor_names:
        if name not in existing:
            graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
            added.append(name)
    wanted = list(tensor_names)
    session = InferenceSession(augmented.SerializeToString(), providers=providers or ["CPUExecutionProvider"])
    output_names = [o.name for o in session.get_outputs()]
    ranges = {}
    batches = 0
    while True:
        feeds = data_reader.get_next()
        if feeds is None:
            break
        batches += 1
        values = dict(zip(output_names, session.run(None, feeds)))
        for name in wanted:
            v = values.get(name)
            if v is None or v.size == 0:
                continue
            lo, hi = np.float32(v.min()), np.float32(v.max())
            if name in ranges:
                lo, hi = min(lo, ranges[name][0]), max(hi, ranges[name][1])
            ranges[name] = (lo, hi)
    if batches == 0:
        raise ValueError("calibration_data_reader gave no feeds: get_next() returned None at once")
    return ranges


def model_from(model_input):
    if isinstance(model_input, onnx.ModelProto):
        return copy.deepcopy(model_input)
    return onnx.load(str(model_input))
