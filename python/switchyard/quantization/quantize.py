"""quantize_dynamic and quantize_static with onnxruntime's signatures.

quantize_dynamic writes the "integer ops" form of onnxruntime's dynamic
quantizer: DynamicQuantizeLinear on the activation, the weight stored
quantized, MatMulInteger / ConvInteger, a Cast to float, a Mul by the product
of the two scales (and for Conv, an Add of the reshaped float bias).

quantize_static writes the QDQ form of onnxruntime's static quantizer:
QuantizeLinear -> DequantizeLinear pairs on the activations (ranges from
calibration), DequantizeLinear on int8 weights stored quantized, int32
biases with scale input_scale * weight_scale, and a Relu or Clip right after
a quantized op folded into that op's QuantizeLinear. With
QuantFormat.QOperator it writes QLinearConv and QLinearMatMul instead (from
the same calibration, weights and biases), with QuantizeLinear and
DequantizeLinear only where float and integer ops meet; only standard-domain
ops, so Switchyard and ONNX Runtime both run the result.
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
# What QuantFormat.QOperator writes integer ops for (Relu and Clip only folded into them).
QOPERATOR_OP_TYPES = ("Conv", "MatMul", "Gemm", "Relu", "Clip")
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

    QuantFormat.QDQ (the default) keeps the float ops between
    QuantizeLinear -> DequantizeLinear pairs. QuantFormat.QOperator writes
    integer ops of the standard domain only: Conv with a constant weight
    becomes QLinearConv (int32 bias, scale x_scale * w_scale, zero point 0),
    MatMul with a constant 2-D B and Gemm with a constant B (transA 0)
    become QLinearMatMul. A Gemm's bias stays float: the Gemm is written as
    QLinearMatMul (of A and alpha * B) -> DequantizeLinear -> Add of
    beta * C, the product's range calibrated on its own. Quantized tensors
    pass straight from one integer op to the next; QuantizeLinear goes where
    a float tensor enters an integer op, DequantizeLinear where a float op
    or a graph output reads an integer op's result. Other ops (Add, Mul,
    pooling: ONNX has no QLinear form of them outside com.microsoft) stay
    float in QOperator.

    In both formats a Relu or Clip right after a quantized op is folded into
    it (its range clamps as it did); per_channel gives Conv weights one
    scale per output channel (axis 0) and MatMul/Gemm weights one per
    output column (axis 1 of B, or 0 for a QDQ Gemm with transB);
    QLinearMatMul takes per-column b_scale / b_zero_point since opset 10.
    reduce_range quantizes weights to 7 bits. Activations are asymmetric
    (extra_options ActivationSymmetric), int8 weights symmetric
    (WeightSymmetric)."""
    if not isinstance(quant_format, QuantFormat):
        raise TypeError(f"quant_format must be a QuantFormat (QuantFormat.QDQ or QuantFormat.QOperator), "
                        f"not {quant_format!r}")
    _check_method(calibrate_method)
    activation_type = _as_type(activation_type, "activation_type")
    weight_type = _as_type(weight_type, "weight_type")
    extra_options = dict(extra_options or {})
    op_types = set(op_types_to_quantize or STATIC_OP_TYPES)
    qoperator = quant_format is QuantFormat.QOperator
    model = model_from(model_input)
    from_gemm = set()
    if qoperator:
        left_float = op_types - set(QOPERATOR_OP_TYPES)
        if op_types_to_quantize and left_float:
            warnings.warn(f"QuantFormat.QOperator quantizes only {list(QOPERATOR_OP_TYPES)}; {sorted(left_float)} "
                          "are left in float", stacklevel=2)
        from_gemm = _gemms_as_matmuls(model, op_types, nodes_to_quantize, nodes_to_exclude)
    float_model = model_from(model)  # calibration runs this copy: every tensor named below exists in it
    _ensure_opset(model, 13 if per_channel and not qoperator else 11)
    q = _Static(_Model(model), op_types, nodes_to_quantize, nodes_to_exclude, from_gemm, per_channel, reduce_range,
                activation_type, weight_type, extra_options)
    calibrate = (lambda names: q.calibrate(float_model, names, calibration_data_reader, calibration_providers))
    if qoperator:
        _write_qoperator(q, calibrate)
    else:
        _write_qdq(q, calibrate, extra_options.get("QDQKeepRemovableActivations", False))
    _save(model, model_output, use_external_data_format)


class _Static:
    """What both formats of quantize_static share: the model, its nodes and
    the ones selected, the options, the activations' scales and zero points
    from calibration, and the weights and biases stored quantized."""

    def __init__(self, m, op_types, nodes_to_quantize, nodes_to_exclude, also_selected, per_channel, reduce_range,
                 activation_type, weight_type, extra_options):
        self.m = m
        self.nodes = list(m.graph.node)
        # also_selected: outputs of nodes selected whatever op_types says (the MatMul a Gemm became).
        self.selected = [n for n in self.nodes if _selected(n, op_types, nodes_to_quantize, nodes_to_exclude)
                         or (len(n.output) > 0 and n.output[0] in also_selected)]
        self.producer = {o: n for n in self.nodes for o in n.output}
        self.per_channel = per_channel
        self.reduce_range = reduce_range
        self.activation_type = activation_type
        self.weight_type = weight_type
        self.w_symmetric = _weight_symmetric(weight_type, extra_options)
        self.a_symmetric = extra_options.get("ActivationSymmetric", False)
        self.a_params = {}  # activation -> (scale, zero point) arrays
        self.a_names = {}   # activation -> (scale, zero point) initializer names
        self.weights = {}   # _quantize_weight's cache

    def is_activation(self, name):
        return self.m.is_float(name) and name not in self.m.initializers

    def fold_activations(self, absorbs):
        """Removes each selected Relu or Clip whose input is written by a node
        that absorbs(node) and read by nothing else: that node writes the
        activation's output instead, whose measured range (>= 0, or within
        the clip) makes the quantization clamp as the activation did.
        Returns {id(node): [(Relu or Clip, the node's own output), ...]}."""
        m = self.m
        folds = {}
        for n in [n for n in self.selected if n.op_type in _REMOVABLE]:
            src = n.input[0]
            up = self.producer.get(src)
            if (up is None or not absorbs(up) or src in m.graph_outputs
                    or len(m.consumers(src, self.nodes)) != 1):
                continue
            _rename_output(up, src, n.output[0])
            self.nodes.remove(n)
            self.selected.remove(n)
            self.producer[n.output[0]] = up
            m.types[n.output[0]] = TensorProto.FLOAT
            folds.setdefault(id(up), []).append((n, src))
        return folds

    def unfold(self, node, folds):
        """Puts back the Relu / Clip nodes fold_activations took into node."""
        for act, src in reversed(folds.pop(id(node), [])):
            _rename_output(node, act.output[0], src)
            self.producer[act.output[0]] = act
            self.nodes.append(act)

    def calibrate(self, float_model, activations, reader, providers):
        ranges = collect_min_max(float_model, activations, reader, providers)
        qmin, qmax = get_qmin_qmax_for_qType(self.activation_type, symmetric=self.a_symmetric)
        for name in activations:
            if name in ranges:
                lo, hi = ranges[name]
                zp, scale = compute_scale_zp(lo, hi, qmin, qmax, self.a_symmetric)
                self.a_params[name] = (scale, zp)

    def activation_params(self, name):
        """The initializers NAME_scale and NAME_zero_point of a calibrated activation."""
        if name not in self.a_names:
            scale, zp = self.a_params[name]
            self.a_names[name] = (self.m.add_initializer(scale, name + "_scale"),
                                  self.m.add_initializer(zp, name + "_zero_point"))
        return self.a_names[name]

    def weight(self, name, axis):
        return _quantize_weight(self.m, name, self.weight_type, self.w_symmetric, self.reduce_range, axis,
                                self.weights)

    def bias(self, bias, x, w, beta=1.0, suffix="_quantized"):
        """Stores bias as int32 with scale x_scale * w_scale * beta (per
        channel where the weight is) and zero point 0, as onnxruntime does;
        w must be quantized already. Returns the name and the scale."""
        b_scale = (np.float32(self.a_params[x][0]) * np.asarray(self.weights[w][1], dtype=np.float32)
                   * np.float32(beta)).astype(np.float32)
        b = self.m.weight(bias).astype(np.float32)
        info = np.iinfo(np.int32)
        q = np.clip(np.round(b / b_scale), info.min, info.max).astype(np.int32)
        return self.m.add_initializer(q, bias + suffix), b_scale


def _rename_output(node, old, new):
    outs = [new if o == old else o for o in node.output]
    del node.output[:]
    node.output.extend(outs)


def _write_qdq(q, calibrate, keep_activations):
    m = q.m
    selected_ids = {id(n) for n in q.selected}
    if not keep_activations:
        q.fold_activations(lambda up: id(up) in selected_ids and up.op_type not in _REMOVABLE)

    activations, weights, biases = [], {}, []

    def activation(name):
        if q.is_activation(name) and name not in activations:
            activations.append(name)

    def weight(name, axis=None):
        if m.is_float_initializer(name):
            weights.setdefault(name, axis)

    for n in q.selected:
        op = n.op_type
        if op in ("Conv", "MatMul", "Gemm"):
            activation(n.input[0])
            if op == "MatMul":
                # Either input may be the constant; a 2-D B gets one scale per column.
                for i in (0, 1):
                    name = n.input[i]
                    if m.is_float_initializer(name):
                        nd = len(m.initializers[name].dims)
                        weight(name, nd - 1 if q.per_channel and i == 1 and nd >= 2 else None)
                    else:
                        activation(name)
            else:
                trans_b = op == "Gemm" and any(a.name == "transB" and a.i for a in n.attribute)
                axis = (0 if op == "Conv" or trans_b else 1) if q.per_channel else None
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

    calibrate(activations)

    new_nodes = []
    renamed = {}  # tensor -> the DequantizeLinear output that replaces it as an input
    for name in activations:
        if name not in q.a_params:
            continue
        s, z = q.activation_params(name)
        q_in = name
        if name in m.graph_outputs:
            # The graph output keeps its name, now written by DequantizeLinear.
            q_in = name + "_QuantizeLinear_Input"
            _rename_output(q.producer[name], name, q_in)
            dq_out = name
        else:
            dq_out = name + "_DequantizeLinear_Output"
            renamed[name] = dq_out
        q_out = name + "_QuantizeLinear_Output"
        new_nodes.append(helper.make_node("QuantizeLinear", [q_in, s, z], [q_out], name + "_QuantizeLinear"))
        new_nodes.append(helper.make_node("DequantizeLinear", [q_out, s, z], [dq_out], name + "_DequantizeLinear"))

    for name, axis in weights.items():
        (w_q, s, z), _ = q.weight(name, axis)
        dq_out = name + "_DequantizeLinear_Output"
        attrs = {"axis": axis} if axis is not None else {}
        new_nodes.append(helper.make_node("DequantizeLinear", [w_q, s, z], [dq_out], name + "_DequantizeLinear",
                                          **attrs))
        renamed[name] = dq_out

    for bias, x, w, beta in biases:
        if x not in q.a_params or w not in q.weights or bias in renamed:
            continue
        q_name, b_scale = q.bias(bias, x, w, beta)
        s = m.add_initializer(b_scale, bias + "_quantized_scale")
        z = m.add_initializer(np.zeros(b_scale.shape, dtype=np.int32), bias + "_quantized_zero_point")
        attrs = {"axis": 0} if b_scale.ndim == 1 else {}
        dq_out = bias + "_DequantizeLinear_Output"
        new_nodes.append(helper.make_node("DequantizeLinear", [q_name, s, z], [dq_out], bias + "_DequantizeLinear",
                                          **attrs))
        renamed[bias] = dq_out

    for n in q.nodes:
        ins = [renamed.get(i, i) for i in n.input]
        del n.input[:]
        n.input.extend(ins)
    m.finish(new_nodes + q.nodes)


def _qoperator_candidate(m, n):
    """A Conv with a constant weight (and no bias or a constant 1-D one) or a
    MatMul with a constant 2-D B, between float activations."""
    if n.op_type not in ("Conv", "MatMul") or len(n.input) < 2 or not m.is_float_initializer(n.input[1]):
        return False
    if n.op_type == "MatMul":
        constant_ok = len(m.initializers[n.input[1]].dims) == 2
    else:
        bias = n.input[2] if len(n.input) > 2 else ""
        constant_ok = not bias or (m.is_float_initializer(bias) and len(m.initializers[bias].dims) == 1)
    x, y = n.input[0], n.output[0]
    return constant_ok and m.is_float(x) and x not in m.initializers and m.is_float(y)


def _write_qoperator(q, calibrate):
    m = q.m
    qops = [n for n in q.selected if _qoperator_candidate(m, n)]
    ids = {id(n) for n in qops}
    folds = q.fold_activations(lambda up: id(up) in ids)
    activations = list(dict.fromkeys(name for n in qops for name in (n.input[0], n.output[0])))
    calibrate(activations)
    for n in qops:
        if n.input[0] not in q.a_params or n.output[0] not in q.a_params:  # no range measured: stays float
            ids.discard(id(n))
            q.unfold(n, folds)
    qops = [n for n in qops if id(n) in ids]

    new_nodes = []
    quantized = {}  # activation -> [quantized tensor, scale, zero point]
    biases = set()
    qop_outputs = {n.output[0] for n in qops}

    def as_quantized(name):
        if name not in quantized:
            s, z = q.activation_params(name)
            q_name = name + "_quantized"
            if name not in qop_outputs:  # a float tensor entering an integer op
                new_nodes.append(helper.make_node("QuantizeLinear", [name, s, z], [q_name], name + "_QuantizeLinear"))
            quantized[name] = [q_name, s, z]
        return quantized[name]

    for n in qops:
        conv = n.op_type == "Conv"
        x, y = n.input[0], n.output[0]
        axis = (0 if conv else 1) if q.per_channel else None
        (w_q, w_s, w_z), _ = q.weight(n.input[1], axis)
        inputs = as_quantized(x) + [w_q, w_s, w_z] + as_quantized(y)[1:]
        if conv and len(n.input) > 2 and n.input[2]:
            # A bias two convs share gets one int32 copy for each (their scales differ).
            suffix = "_quantized" if n.input[2] not in biases else f"_{y}_quantized"
            biases.add(n.input[2])
            inputs.append(q.bias(n.input[2], x, n.input[1], suffix=suffix)[0])
        qnode = helper.make_node("QLinearConv" if conv else "QLinearMatMul", inputs, [as_quantized(y)[0]],
                                 n.name + "_quant" if n.name else y + "_quant")
        if conv:
            qnode.attribute.extend(n.attribute)
        new_nodes.append(qnode)

    float_nodes = [n for n in q.nodes if id(n) not in ids]
    read_as_float = {i for n in float_nodes for i in n.input} | m.graph_outputs
    for name in qop_outputs & read_as_float:
        new_nodes.append(helper.make_node("DequantizeLinear", quantized[name], [name], name + "_DequantizeLinear"))
    m.finish(new_nodes + float_nodes)


def _gemms_as_matmuls(model, op_types, nodes_to_quantize, nodes_to_exclude):
    """Rewrites each selected Gemm with a constant 2-D B and transA 0 (and C
    absent or constant) as MatMul(A, alpha * B, transposed for transB) then,
    with C, a float Add of beta * C. Returns the MatMuls' outputs."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    taken = set(inits) | {o for n in graph.node for o in list(n.input) + list(n.output)}
    taken |= {v.name for v in list(graph.input) + list(graph.output)}

    def unique(name):
        k, base = 0, name
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        taken.add(name)
        return name

    def constant(array, name):
        graph.initializer.append(numpy_helper.from_array(np.ascontiguousarray(array, dtype=np.float32), unique(name)))
        return graph.initializer[-1].name

    nodes, matmuls = [], set()
    for n in graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        b = inits.get(n.input[1]) if n.op_type == "Gemm" and len(n.input) > 1 else None
        c = n.input[2] if len(n.input) > 2 else ""
        if (b is None or b.data_type != TensorProto.FLOAT or len(b.dims) != 2 or attrs.get("transA", 0)
                or (c and c not in inits) or not _selected(n, op_types, nodes_to_quantize, nodes_to_exclude)):
            nodes.append(n)
            continue
        alpha, beta = attrs.get("alpha", 1.0), attrs.get("beta", 1.0)
        w = b.name
        if attrs.get("transB", 0) or alpha != 1.0:
            array = numpy_helper.to_array(b)
            w = constant((array.T if attrs.get("transB", 0) else array) * np.float32(alpha), b.name + "_MatMul")
        product = unique(n.output[0] + "_MatMul") if c else n.output[0]
        nodes.append(helper.make_node("MatMul", [n.input[0], w], [product], n.name))
        matmuls.add(product)
        if c:
            if beta != 1.0:
                c = constant(numpy_helper.to_array(inits[c]) * np.float32(beta), c + "_beta")
            nodes.append(helper.make_node("Add", [product, c], [n.output[0]], (n.name or product) + "_bias"))
    del graph.node[:]
    graph.node.extend(nodes)
    return matmuls
