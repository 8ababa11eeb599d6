"""onnxruntime.capi._pybind_state's name for the same module."""

from .onnxruntime_pybind11_state import *  # noqa: F401,F403
from .onnxruntime_pybind11_state import __all__  # noqa: F401
