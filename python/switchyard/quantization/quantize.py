"""quantize_dynamic and quantize_static with onnxruntime's signatures.

quantize_dynamic writes the "integer ops" form of onnxruntime's dynamic
quantizer: DynamicQuantizeLinear on the activation, the weight stored
quantized, MatMulInteger / ConvInteger, a Cast to float, a Mul by the product
of the two scales (and for Conv, an Add of the reshaped float bias).

quantize_static writes the QDQ form of onnxruntime's static quantizer:
QuantizeLinear -> DequantizeLinear pairs on the activations (ranges from
calibration), DequantizeLinear on int8 weights stored quantized, int32
biases with scale input_scale * weight_scale, and a Relu or Clip right after
a quantized op folded into that op's QuantizeLinear.
"""

import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .calibrate import CalibrationMethod, _check_method, collect_min_max, model_from
from .quant_utils import (
    QuantFormat,
    QuantType,
    compute_scale_zp,
    get_qmin_qmax_for_qType,
    quantize_data,
    quantize_data_per_channel,
)

# What each quantizer handles when op_types_to_quantize is not given.
DYNAMIC_OP_TYPES = ("MatMul", "Conv")
STATIC_OP_TYPES = ("Conv", "MatMul", "Gemm", "Relu", "Clip", "Add", "Mul", "GlobalAveragePool", "AveragePool",
                   "MaxPool")
_REMOVABLE = ("Relu", "Clip")
_FIRST_INPUT_ONLY = ("Relu", "Clip", "GlobalAveragePool", "AveragePool", "MaxPool")


class _Model:
    """A model being rewritten: its initializers by name, the element type
    of every tensor shape inference knows, and the new nodes and
    initializers."""

    def __init__(self, model):
        self.model = model
        self.graph = model.graph
        self.initializers = {t.name: t for t in self.graph.initializer}
        try:
            inferred = onnx.shape_inference.infer_shapes(model)
        except Exception:  # noqa: BLE001 - types are a help, not a must
            inferred = model
        self.types = {}
        for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
            if vi.type.HasField("tensor_type"):
                self.types[vi.name] = vi.type.tensor_type.elem_type
        for t in self.graph.initializer:
            self.types[t.name] = t.data_type
        self.graph_outputs = {o.name for o in self.graph.output}
        self.new_initializers = []

    def is_float(self, name):
        return bool(name) and self.types.get(name) == TensorProto.FLOAT

    def is_float_initializer(self, name):
        return name in self.initializers and self.initializers[name].data_type == TensorProto.FLOAT

    def weight(self, name):
        return numpy_helper.to_array(self.initializers[name])

    def add_initializer(self, array, name):
        self.new_initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def consumers(self, name, nodes):
        return [n for n in nodes if name in n.input]

    def finish(self, nodes):
        """Replaces the nodes, adds the new initializers, drops the ones no
        node uses any more, and sorts the nodes topologically."""
        self.graph.initializer.extend(self.new_initializers)
        # A Constant that fed only a folded Relu or Clip (its min and max) goes too.
        used = {i for n in nodes for i in n.input} | self.graph_outputs
        nodes = [n for n in nodes if n.op_type != "Constant" or any(o in used for o in n.output)]
        del self.graph.node[:]
        self.graph.node.extend(_topological(nodes, self.graph))
        used = {i for n in self.graph.node for i in n.input} | self.graph_outputs
        graph_inputs = {i.name for i in self.graph.input}
        keep = [t for t in self.graph.initializer if t.name in used or t.name in graph_inputs]
        del self.graph.initializer[:]
        self.graph.initializer.extend(keep)


def _topological(nodes, graph):
    available = {i.name for i in graph.input} | {t.name for t in graph.initializer} | {""}
    pending = list(nodes)
    ordered = []
    while pending:
        rest = []
        for n in pending:
            if all(i in available for i in n.input):
                ordered.append(n)
                available.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):  # inputs from outer scopes or a cycle: keep the given order
            ordered.extend(rest)
            break
        pending = rest
    return ordered


def _ensure_opset(model, version):
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx"):
            if opset.version < version:
                warnings.warn(f"the model's opset is {opset.version}; quantization needs at least {version}, so the "
                              f"quantized model imports opset {version}", stacklevel=3)
                opset.version = version
            return
    model.opset_import.append(helper.make_opsetid("", version))


def _selected(node, op_types, nodes_to_quantize, nodes_to_exclude):
    if node.op_type not in op_types:
        return False
    if nodes_to_quantize and node.name not in nodes_to_quantize:
        return False
    return not (nodes_to_exclude and node.name in nodes_to_exclude)


def _as_type(t, what):
    if isinstance(t, QuantType):
        return t
    raise TypeError(f"{what} must be a QuantType (QuantType.QInt8 or QuantType.QUInt8), not {t!r}")


def _save(model, model_output, use_external_data_format):
    if use_external_data_format:
        import os
        onnx.save_model(model, str(model_output), save_as_external_data=True, all_tensors_to_one_file=True,
                        location=os.path.basename(str(model_output)) + ".data", size_threshold=1024)
    else:
        onnx.save_model(model, str(model_output))


def _quantize_weight(m, name, qtype, symmetric, reduce_range, axis, cache):
    """Stores initializer name quantized (NAME_quantized, NAME_scale,
    NAME_zero_point); per-tensor when axis is None. Returns the three names
    and the scale array."""
    if name in cache:
        return cache[name]
    w = m.weight(name)
    if axis is None:
        _, _, zp, scale, q = quantize_data(w, qtype, symmetric, reduce_range)
    else:
        zp, scale, q = quantize_data_per_channel(w, qtype, symmetric, reduce_range, axis)
    names = (m.add_initializer(q, name + "_quantized"), m.add_initializer(scale, name + "_scale"),
             m.add_initializer(zp, name + "_zero_point"))
    cache[name] = (names, scale)
    return cache[name]


def _weight_symmetric(weight_type, extra_options):
    return extra_options.get("WeightSymmetric", weight_type is QuantType.QInt8)


def quantize_dynamic(model_input, model_output, op_types_to_quantize=None, per_channel=False, reduce_range=False,
                     weight_type=QuantType.QInt8, nodes_to_quantize=None, nodes_to_exclude=None,
                     use_external_data_format=False, extra_options=None):
    """Quantizes the weights of MatMul and Conv nodes now and their input
    activations at run time (DynamicQuantizeLinear, uint8). MatMul is
    quantized only where its B input is an initializer; per_channel gives
    MatMul weights one scale per output column (Conv weights stay
    per-tensor, as onnxruntime does); reduce_range quantizes weights to 7
    bits."""
    weight_type = _as_type(weight_type, "weight_type")
    extra_options = dict(extra_options or {})
    op_types = set(op_types_to_quantize or DYNAMIC_OP_TYPES)
    unsupported = op_types - set(DYNAMIC_OP_TYPES)
    if op_types_to_quantize and unsupported:
        warnings.warn(f"quantize_dynamic quantizes only {list(DYNAMIC_OP_TYPES)}; {sorted(unsupported)} are left "
                      "in float", stacklevel=2)
    model = model_from(model_input)
    _ensure_opset(model, 11)
    m = _Model(model)
    symmetric = _weight_symmetric(weight_type, extra_options)
    weights, activations, nodes = {}, {}, []

    def activation(name):
        if name not in activations:
            outs = [name + "_quantized", name + "_scale", name + "_zero_point"]
            nodes.append(helper.make_node("DynamicQuantizeLinear", [name], outs, name + "_QuantizeLinear"))
            activations[name] = outs
        return activations[name]

    for node in m.graph.node:
        op = node.op_type
        if (not _selected(node, op_types, nodes_to_quantize, nodes_to_exclude) or op not in DYNAMIC_OP_TYPES
                or not m.is_float_initializer(node.input[1]) or not m.is_float(node.input[0])):
            nodes.append(node)
            continue
        w = m.weight(node.input[1])
        if op == "MatMul":
            axis = w.ndim - 1 if per_channel and w.ndim == 2 else None
        else:
            axis = None
        x_q, x_scale, x_zp = activation(node.input[0])
        (w_q, w_scale, w_zp), _ = _quantize_weight(m, node.input[1], weight_type, symmetric, reduce_range, axis,
                                                   weights)
        base = node.name + "_quant" if node.name else node.output[0] + "_quant"
        int_out = node.output[0] + "_output_quantized"
        cast_out = int_out + "_cast_output"
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute} if op == "Conv" else {}
        nodes.append(helper.make_node("MatMulInteger" if op == "MatMul" else "ConvInteger",
                                      [x_q, w_q, x_zp, w_zp], [int_out], base, **attrs))
        nodes.append(helper.make_node("Cast", [int_out], [cast_out], int_out + "_cast", to=TensorProto.FLOAT))
        nodes.append(helper.make_node("Mul", [x_scale, w_scale], [base + "_scales_mul:0"], base + "_scales_mul"))
        has_bias = op == "Conv" and len(node.input) > 2 and node.input[2]
        scaled = node.output[0] + "quant_scaled_output" if has_bias else node.output[0]
        nodes.append(helper.make_node("Mul", [cast_out, base + "_scales_mul:0"], [scaled], base + "_output_scale_mul"))
        if has_bias:
            shape = np.ones(w.ndim, dtype=np.int64)
            shape[1] = -1
            shape_name = m.add_initializer(shape, node.output[0] + "_bias_reshape_shape")
            reshaped = node.output[0] + "_bias_reshape_output"
            nodes.append(helper.make_node("Reshape", [node.input[2], shape_name], [reshaped],
                                          node.output[0] + "_bias_reshape"))
            nodes.append(helper.make_node("Add", [scaled, reshaped], [node.output[0]], node.output[0] + "_bias_add"))
    m.finish(nodes)
    _save(model, model_output, use_external_data_format)


def quantize_static(model_input, model_output, calibration_data_reader, quant_format=QuantFormat.QDQ,
                    op_types_to_quantize=None, per_channel=False, reduce_range=False,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, nodes_to_quantize=None,
                    nodes_to_exclude=None, use_external_data_format=False, calibrate_method=CalibrationMethod.MinMax,
                    calibration_providers=None, extra_options=None):
    """Quantizes weights now and activations with ranges measured by running
    the float model through Switchyard on calibration_data_reader's feeds.
    Writes the QDQ format; per_channel gives Conv weights one scale per
    output channel (axis 0) and MatMul/Gemm weights one per output column
    (axis 1, or 0 for a Gemm with transB); reduce_range quantizes weights to
    7 bits. Activations are asymmetric (extra_options ActivationSymmetric),
    int8 weights symmetric (WeightSymmetric)."""
    if quant_format != QuantFormat.QDQ:
        if quant_format == QuantFormat.QOperator:
            raise NotImplementedError("switchyard.quantization writes QuantFormat.QDQ only; QuantFormat.QOperator "
                                      "(QLinearConv, QLinearMatMul) is not implemented yet")
        raise TypeError(f"quant_format must be a QuantFormat, not {quant_format!r}")
    _check_method(calibrate_method)
    activation_type = _as_type(activation_type, "activation_type")
    weight_type = _as_type(weight_type, "weight_type")
    extra_options = dict(extra_options or {})
    op_types = set(op_types_to_quantize or STATIC_OP_TYPES)
    float_model = model_from(model_input)
    model = model_from(float_model)
    _ensure_opset(model, 13 if per_channel else 11)
    m = _Model(model)
    w_symmetric = _weight_symmetric(weight_type, extra_options)
    a_symmetric = extra_options.get("ActivationSymmetric", False)
    keep_activations = extra_options.get("QDQKeepRemovableActivations", False)

    nodes = list(m.graph.node)
    selected = [n for n in nodes if _selected(n, op_types, nodes_to_quantize, nodes_to_exclude)]
    selected_ids = {id(n) for n in selected}
    producer = {o: n for n in nodes for o in n.output}

    # A Relu or Clip right after a quantized op goes: the op writes the
    # activation's output, whose measured range (>= 0, or within the clip)
    # makes QuantizeLinear clamp as the activation did.
    if not keep_activations:
        for n in [n for n in selected if n.op_type in _REMOVABLE]:
            src = n.input[0]
            up = producer.get(src)
            if (up is None or id(up) not in selected_ids or up.op_type in _REMOVABLE or src in m.graph_outputs
                    or len(m.consumers(src, nodes)) != 1):
                continue
            outs = list(up.output)
            outs[outs.index(src)] = n.output[0]
            del up.output[:]
            up.output.extend(outs)
            nodes.remove(n)
            selected.remove(n)
            producer[n.output[0]] = up
            m.types[n.output[0]] = TensorProto.FLOAT

    activations, weights, biases = [], {}, []

    def activation(name):
        if m.is_float(name) and name not in m.initializers and name not in activations:
            activations.append(name)

    def weight(name, axis=None):
        if m.is_float_initializer(name):
            weights.setdefault(name, axis)

    for n in selected:
        op = n.op_type
        if op in ("Conv", "MatMul", "Gemm"):
            activation(n.input[0])
            if op == "MatMul":
                # Either input may be the constant; a 2-D B gets one scale per column.
                for i in (0, 1):
                    name = n.input[i]
                    if m.is_float_initializer(name):
                        nd = len(m.initializers[name].dims)
                        weight(name, nd - 1 if per_channel and i == 1 and nd >= 2 else None)
                    else:
                        activation(name)
            else:
                trans_b = op == "Gemm" and any(a.name == "transB" and a.i for a in n.attribute)
                axis = (0 if op == "Conv" or trans_b else 1) if per_channel else None
                if m.is_float_initializer(n.input[1]):
                    weight(n.input[1], axis)
                else:
                    activation(n.input[1])
                if len(n.input) > 2 and n.input[2]:
                    bias = n.input[2]
                    is_1d = m.is_float_initializer(bias) and len(m.initializers[bias].dims) == 1
                    if is_1d and m.is_float_initializer(n.input[1]):
                        beta = next((a.f for a in n.attribute if a.name == "beta"), 1.0) if op == "Gemm" else 1.0
                        biases.append((bias, n.input[0], n.input[1], beta))
                    elif not m.is_float_initializer(bias):
                        activation(bias)
            activation(n.output[0])
        elif op in _FIRST_INPUT_ONLY:
            activation(n.input[0])
            activation(n.output[0])
        else:
            for name in n.input:
                if m.is_float_initializer(name):
                    weight(name)
                else:
                    activation(name)
            for name in n.output:
                activation(name)

    # Calibration, on the float model: the names kept above all exist there.
    reader_ranges = collect_min_max(float_model, activations, calibration_data_reader, calibration_providers)
    qmin, qmax = get_qmin_qmax_for_qType(activation_type, symmetric=a_symmetric)
    a_params = {}
    for name in activations:
        if name in reader_ranges:
            lo, hi = reader_ranges[name]
            zp, scale = compute_scale_zp(lo, hi, qmin, qmax, a_symmetric)
            a_params[name] = (scale, zp)

    new_nodes = []
    renamed = {}  # tensor -> the DequantizeLinear output that replaces it as an input
    for name in activations:
        if name not in a_params:
            continue
        scale, zp = a_params[name]
        s = m.add_initializer(scale, name + "_scale")
        z = m.add_initializer(zp, name + "_zero_point")
        q_in = name
        if name in m.graph_outputs:
            # The graph output keeps its name, now written by DequantizeLinear.
            q_in = name + "_QuantizeLinear_Input"
            up = producer[name]
            outs = [q_in if o == name else o for o in up.output]
            del up.output[:]
            up.output.extend(outs)
            dq_out = name
        else:
            dq_out = name + "_DequantizeLinear_Output"
            renamed[name] = dq_out
        q_out = name + "_QuantizeLinear_Output"
        new_nodes.append(helper.make_node("QuantizeLinear", [q_in, s, z], [q_out], name + "_QuantizeLinear"))
        new_nodes.append(helper.make_node("DequantizeLinear", [q_out, s, z], [dq_out], name + "_DequantizeLinear"))

    w_cache = {}
    for name, axis in weights.items():
        (q, s, z), _ = _quantize_weight(m, name, weight_type, w_symmetric, reduce_range, axis, w_cache)
        dq_out = name + "_DequantizeLinear_Output"
        attrs = {"axis": axis} if axis is not None else {}
        new_nodes.append(helper.make_node("DequantizeLinear", [q, s, z], [dq_out], name + "_DequantizeLinear",
                                          **attrs))
        renamed[name] = dq_out

    for bias, x, w, beta in biases:
        if x not in a_params or w not in w_cache or bias in w_cache:
            continue
        x_scale = a_params[x][0]
        w_scale = w_cache[w][1]
        b_scale = (np.float32(x_scale) * np.asarray(w_scale, dtype=np.float32) * np.float32(beta)).astype(np.float32)
        b = m.weight(bias).astype(np.float32)
        info = np.iinfo(np.int32)
        q = np.clip(np.round(b / b_scale), info.min, info.max).astype(np.int32)
        q_name = m.add_initializer(q, bias + "_quantized")
        s = m.add_initializer(b_scale, bias + "_quantized_scale")
        z = m.add_initializer(np.zeros(b_scale.shape, dtype=np.int32), bias + "_quantized_zero_point")
        attrs = {"axis": 0} if b_scale.ndim == 1 else {}
        dq_out = bias + "_DequantizeLinear_Output"
        new_nodes.append(helper.make_node("DequantizeLinear", [q_name, s, z], [dq_out], bias + "_DequantizeLinear",
                                          **attrs))
        renamed[bias] = dq_out
        w_cache[bias] = None

    for n in nodes:
        ins = [renamed.get(i, i) for i in n.input]
        del n.input[:]
        n.input.extend(ins)
    m.finish(new_nodes + nodes)
    _save(model, model_output, use_external_data_format)
