"""Mirrors onnxruntime.capi, so that ``ort.capi.onnxruntime_pybind11_state.Fail``
and ``from switchyard.capi.onnxruntime_pybind11_state import InvalidArgument``
work as they do with onnxruntime."""

from . import _pybind_state, onnxruntime_pybind11_state  # noqa: F401
