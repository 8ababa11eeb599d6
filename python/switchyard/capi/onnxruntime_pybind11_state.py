"""onnxruntime.capi.onnxruntime_pybind11_state's names, for code that imports
the exception classes (or options) from there."""

from .._switchyard import (  # noqa: F401
    EngineError,
    EPFail,
    Error,
    ExecutionMode,
    Fail,
    GraphOptimizationLevel,
    InvalidArgument,
    InvalidGraph,
    InvalidProtobuf,
    ModelLoaded,
    NoModel,
    NoSuchFile,
    NotImplemented,
    RunOptions,
    RuntimeException,
    SessionOptions,
    get_all_providers,
    get_available_providers,
    get_device,
    get_version_string,
    set_default_logger_severity,
    set_default_logger_verbosity,
)
from ..session import ModelMetadata, NodeArg  # noqa: F401

__all__ = [
    "EngineError", "EPFail", "Error", "ExecutionMode", "Fail", "GraphOptimizationLevel", "InvalidArgument",
    "InvalidGraph", "InvalidProtobuf", "ModelLoaded", "ModelMetadata", "NoModel", "NoSuchFile", "NodeArg",
    "NotImplemented", "RunOptions", "RuntimeException", "SessionOptions", "get_all_providers",
    "get_available_providers", "get_device", "get_version_string", "set_default_logger_severity",
    "set_default_logger_verbosity",
]
