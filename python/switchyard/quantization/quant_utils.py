"""Quantization types and the scale / zero-point arithmetic.

The names and the arithmetic follow onnxruntime.quantization.quant_utils, so
that a model quantized here gets the same scales and zero points as one
quantized by onnxruntime's tool from the same ranges.
"""

from enum import Enum

import numpy as np
from onnx import TensorProto


class QuantType(Enum):
    QInt8 = 0
    QUInt8 = 1

    def __str__(self):
        return self.name

    @staticmethod
    def from_string(t):
        return _member(QuantType, t)

    @property
    def tensor_type(self):
        return TensorProto.INT8 if self is QuantType.QInt8 else TensorProto.UINT8

    @property
    def numpy_type(self):
        return np.int8 if self is QuantType.QInt8 else np.uint8


class QuantFormat(Enum):
    QOperator = 0
    QDQ = 1

    def __str__(self):
        return self.name

    @staticmethod
    def from_string(f):
        return _member(QuantFormat, f)


def _member(enum_type, name):
    try:
        return enum_type[name]
    except KeyError:
        raise ValueError(f"{name!r} is not a {enum_type.__name__}; expected one of "
                         f"{[m.name for m in enum_type]}") from None


def get_qmin_qmax_for_qType(qType, reduce_range=False, symmetric=False):  # noqa: N802,N803 - onnxruntime's name
    """The integer range a tensor of this type is quantized into.

    int8: [-128, 127], or [-127, 127] when symmetric (so that zero point 0
    lies in the middle), or [-64, 64] with reduce_range.
    uint8: [0, 255], or [0, 127] with reduce_range.
    """
    qType = _as_quant_type(qType)  # noqa: N806
    if qType is QuantType.QInt8:
        if reduce_range:
            return np.int8(-64), np.int8(64)
        return (np.int8(-127), np.int8(127)) if symmetric else (np.int8(-128), np.int8(127))
    return (np.uint8(0), np.uint8(127)) if reduce_range else (np.uint8(0), np.uint8(255))


def compute_scale_zp(rmin, rmax, qmin, qmax, symmetric=False):
    """Returns [zero_point, scale] mapping [rmin, rmax] onto [qmin, qmax].

    The range is first widened to include 0 so that 0.0 is exactly
    representable; symmetric makes it [-max|r|, max|r|]. A range that is
    (almost) empty gets scale 1 and zero point 0.
    """
    rmin = np.minimum(np.float32(rmin), np.float32(0))
    rmax = np.maximum(np.float32(rmax), np.float32(0))
    if symmetric:
        absmax = np.maximum(np.abs(rmin), np.abs(rmax))
        rmin, rmax = -absmax, absmax
    dr = np.float64(rmax) - np.float64(rmin)
    dq = np.float64(qmax) - np.float64(qmin)
    scale = dr / dq
    if scale < np.finfo(np.float32).tiny:
        return [np.array(0, dtype=np.asarray(qmin).dtype), np.array(1.0, dtype=np.float32)]
    if symmetric:
        zero_point = np.round((np.float64(qmin) + np.float64(qmax)) / 2.0)
    else:
        zero_point = np.round(np.float64(qmin) - np.float64(rmin) / scale)
    return [np.array(zero_point, dtype=np.asarray(qmin).dtype), np.array(scale, dtype=np.float32)]


def quantize_nparray(qType, arr, scale, zero_point):  # noqa: N803
    """round(arr / scale) + zero_point, clipped to the type's full range
    (numpy's round: half to even, as QuantizeLinear rounds)."""
    qType = _as_quant_type(qType)  # noqa: N806
    info = np.iinfo(qType.numpy_type)
    q = np.asarray(arr, dtype=np.float32) / np.float32(scale)
    q = np.round(q) + np.float32(zero_point)
    return np.clip(q, info.min, info.max).astype(qType.numpy_type)


def quantize_data(data, qType, symmetric, reduce_range=False):  # noqa: N803
    """Quantizes a whole tensor with one scale: returns rmin, rmax,
    zero_point, scale, quantized_data as onnxruntime's function does."""
    data = np.asarray(data, dtype=np.float32)
    rmin = data.min() if data.size else np.float32(0)
    rmax = data.max() if data.size else np.float32(0)
    qmin, qmax = get_qmin_qmax_for_qType(qType, reduce_range, symmetric=symmetric)
    zero_point, scale = compute_scale_zp(rmin, rmax, qmin, qmax, symmetric)
    return rmin, rmax, zero_point, scale, quantize_nparray(qType, data, scale, zero_point)


def quantize_data_per_channel(data, qType, symmetric, reduce_range, axis):  # noqa: N803
    """One scale and zero point per slice along axis: returns
    (zero_points[C], scales[C], quantized_data)."""
    data = np.asarray(data, dtype=np.float32)
    axis = axis % data.ndim
    zps, scales, parts = [], [], []
    for c in range(data.shape[axis]):
        _, _, zp, scale, q = quantize_data(np.take(data, c, axis=axis), qType, symmetric, reduce_range)
        zps.append(zp)
        scales.append(scale)
        parts.append(np.expand_dims(q, axis))
    qType = _as_quant_type(qType)  # noqa: N806
    return (np.array(zps, dtype=qType.numpy_type), np.array(scales, dtype=np.float32),
            np.concatenate(parts, axis=axis))


def _as_quant_type(q):
    if isinstance(q, QuantType):
        return q
    if q == TensorProto.INT8:
        return QuantType.QInt8
    if q == TensorProto.UINT8:
        return QuantType.QUInt8
    raise NotImplementedError(f"switchyard.quantization supports QuantType.QInt8 and QuantType.QUInt8, not {q!r}")
