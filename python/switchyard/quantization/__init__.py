"""Post-training quantization with onnxruntime.quantization's names.

    from switchyard.quantization import quantize_dynamic, quantize_static, QuantType, QuantFormat

quantize_dynamic writes MatMulInteger / ConvInteger with activations
quantized at run time; quantize_static calibrates activation ranges by
running the model through Switchyard and writes the QDQ format, or with
QuantFormat.QOperator QLinearConv / QLinearMatMul. Both write ordinary ONNX
models (standard-domain ops only) that ONNX Runtime runs as well. See
python/README.md.
"""

from .calibrate import CalibrationDataReader, CalibrationMethod
from .quant_utils import (
    QuantFormat,
    QuantType,
    compute_scale_zp,
    get_qmin_qmax_for_qType,
    quantize_data,
)
from .quantize import quantize_dynamic, quantize_static

__all__ = [
    "CalibrationDataReader",
    "CalibrationMethod",
    "QuantFormat",
    "QuantType",
    "compute_scale_zp",
    "get_qmin_qmax_for_qType",
    "quantize_data",
    "quantize_dynamic",
    "quantize_static",
]
