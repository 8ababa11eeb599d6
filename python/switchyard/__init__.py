"""Switchyard: runs ONNX models through a chain of execution providers.

The API is onnxruntime's: a script written for onnxruntime runs after
changing ``import onnxruntime as ort`` to ``import switchyard as ort``.
See python/README.md for what Switchyard adds (assignment reports, the
fallback policy) and what it leaves out.
"""

from ._switchyard import (
    EngineError,
    EPFail,
    Error,
    ExecutionMode,
    Fail,
    GraphOptimizationLevel,
    InvalidArgument,
    InvalidGraph,
    InvalidProtobuf,
    MissingInput,
    ModelLoaded,
    NoModel,
    NoSuchFile,
    NotImplemented,  # noqa: A004 - onnxruntime's name
    OrtValue,
    RunOptions,
    RuntimeException,
    SessionOptions,
    __version__,
    get_all_providers,
    get_available_providers,
    get_device,
    get_version_string,
    set_default_logger_severity,
    set_default_logger_verbosity,
)
from ._doctor import DoctorReport, ProviderDiagnosis, doctor
from .session import InferenceSession, IOBinding, ModelMetadata, NodeArg, Session
from . import capi  # noqa: F401 - switchyard.capi.onnxruntime_pybind11_state, as in onnxruntime

__all__ = [
    "DoctorReport",
    "EngineError",
    "EPFail",
    "Error",
    "ExecutionMode",
    "Fail",
    "GraphOptimizationLevel",
    "IOBinding",
    "InferenceSession",
    "InvalidArgument",
    "InvalidGraph",
    "InvalidProtobuf",
    "MissingInput",
    "ModelLoaded",
    "ModelMetadata",
    "NoModel",
    "NoSuchFile",
    "NodeArg",
    "NotImplemented",
    "OrtValue",
    "ProviderDiagnosis",
    "RunOptions",
    "RuntimeException",
    "Session",
    "SessionOptions",
    "__version__",
    "doctor",
    "get_all_providers",
    "get_available_providers",
    "get_device",
    "get_version_string",
    "set_default_logger_severity",
    "set_default_logger_verbosity",
]
