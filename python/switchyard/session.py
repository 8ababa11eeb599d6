"""InferenceSession, NodeArg and ModelMetadata, shaped like onnxruntime's.

The work happens in the compiled ``_switchyard._Session``; this layer only
normalises arguments the way onnxruntime's Python layer does, so that code
written for onnxruntime behaves the same here.
"""

import collections.abc
import os
import warnings

from . import _switchyard as _C

_FALLBACK_VALUES = ("allow", "warn", "error")


class NodeArg:
    """An input or output of the model: name, type ("tensor(float)") and shape.

    ``shape`` holds an int per known dimension, a str per symbolic one
    ("batch") and None where nothing is known; it is empty when even the rank
    is unknown.
    """

    __slots__ = ("name", "type", "shape")

    def __init__(self, name, type, shape):  # noqa: A002 - onnxruntime's names
        self.name = name
        self.type = type
        self.shape = shape

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"

    def __eq__(self, other):
        if not isinstance(other, NodeArg):
            return NotImplemented
        return (self.name, self.type, self.shape) == (other.name, other.type, other.shape)

    __hash__ = None


class ModelMetadata:
    """The model's metadata, as onnxruntime.ModelMetadata (plus producer_version,
    ir_version and opset_imports)."""

    def __init__(self, fields):
        self.producer_name = fields["producer_name"]
        self.producer_version = fields["producer_version"]
        self.graph_name = fields["graph_name"]
        self.domain = fields["domain"]
        self.description = fields["description"]
        self.graph_description = fields["graph_description"]
        self.version = fields["version"]
        self.ir_version = fields["ir_version"]
        self.opset_imports = dict(fields["opset_imports"])
        self.custom_metadata_map = dict(fields["custom_metadata_map"])

    def __repr__(self):
        return (f"ModelMetadata(producer_name={self.producer_name!r}, graph_name={self.graph_name!r}, "
                f"domain={self.domain!r}, version={self.version!r})")


def _normalize_providers(providers, provider_options):
    """onnxruntime's rules: names, or (name, options) tuples, or names with a
    parallel provider_options list. Returns [(name, {str: str})]."""
    if providers is None:
        if provider_options is not None:
            raise ValueError("'provider_options' was given without 'providers'.")
        return []
    if isinstance(providers, str) or not isinstance(providers, collections.abc.Sequence):
        raise ValueError("'providers' should be a sequence of names or (name, options dict) tuples.")

    pairs = []
    if provider_options is not None:
        if not isinstance(provider_options, collections.abc.Sequence):
            raise ValueError("'provider_options' should be a sequence.")
        if len(providers) != len(provider_options):
            raise ValueError("'providers' and 'provider_options' should be the same length if both are given.")
        if not all(isinstance(p, str) for p in providers):
            raise ValueError("Only string values for 'providers' are supported if 'provider_options' is given.")
        if not all(isinstance(o, dict) for o in provider_options):
            raise ValueError("'provider_options' values must be dicts.")
        pairs = list(zip(providers, provider_options))
    else:
        for p in providers:
            if isinstance(p, str):
                pairs.append((p, {}))
            elif isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], dict):
                pairs.append(p)
            else:
                raise ValueError("'providers' values must be either strings or (string, dict) tuples.")

    normalized = []
    seen = set()
    for name, options in pairs:
        if name in seen:
            # onnxruntime warns and keeps the first; aliases of one provider
            # ("cpu", "CPUExecutionProvider") are an error in the core instead.
            warnings.warn(f"Duplicate provider '{name}' encountered, ignoring.")
            continue
        seen.add(name)
        normalized.append((name, {str(k): str(v) for k, v in options.items()}))
    return normalized


class InferenceSession:
    """Runs an ONNX model: ``InferenceSession(path_or_bytes, sess_options=None,
    providers=None, provider_options=None)`` as in onnxruntime.

    Switchyard additions: the ``fallback`` keyword ('allow', 'warn', 'error';
    overrides ``sess_options.fallback_policy``), ``get_assignment()`` and
    ``get_assignment_report()``.
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, *,
                 fallback=None, **kwargs):
        if isinstance(path_or_bytes, (str, os.PathLike)):
            self._model_path = os.fspath(path_or_bytes)
            self._model_bytes = None
        elif isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            self._model_path = None
            self._model_bytes = bytes(path_or_bytes)
        else:
            raise TypeError(f"Unable to load from type '{type(path_or_bytes)}'")
        if fallback is not None and fallback not in _FALLBACK_VALUES:
            raise ValueError(f"fallback must be one of {_FALLBACK_VALUES}, got {fallback!r}")
        # onnxruntime's keywords that change nothing here are accepted and ignored.
        unknown = set(kwargs) - {"disabled_optimizers", "read_config_from_model"}
        if unknown:
            raise TypeError(f"InferenceSession() got unexpected keyword arguments: {sorted(unknown)}")

        self._sess_options = sess_options._copy() if sess_options is not None else _C.SessionOptions()
        self._fallback = fallback
        self._sess = None
        self._create(providers, provider_options)

    def _create(self, providers, provider_options):
        normalized = _normalize_providers(providers, provider_options)
        model = self._model_bytes if self._model_bytes is not None else self._model_path
        sess = _C._Session(model, self._sess_options, normalized, self._fallback)
        # Replace only once the new session exists: a failed set_providers()
        # leaves the old session usable.
        self._sess = sess
        self._requested = normalized
        self._inputs_meta = [NodeArg(*t) for t in sess.inputs()]
        self._outputs_meta = [NodeArg(*t) for t in sess.outputs()]
        self._overridable_initializers = [NodeArg(*t) for t in sess.overridable_initializers()]
        self._model_meta = ModelMetadata(sess.metadata())
        self._providers = sess.providers()
        options = {}
        for long_name, (_, opts) in zip(sess.requested_providers(), normalized):
            options[long_name] = dict(opts)
        self._provider_options = {p: options.get(p, {}) for p in self._providers}

    # ---- running ----------------------------------------------------------

    def run(self, output_names, input_feed, run_options=None):
        """Computes ``output_names`` (None or empty: every output) from
        ``input_feed`` (a dict of input name -> numpy array; for a sequence
        input a list of arrays, for an optional input None or its value);
        returns a list of numpy arrays (a list of arrays for a sequence
        output, None for an empty optional). The GIL is released while the
        model runs."""
        return self._sess.run(output_names, input_feed, run_options)

    def io_binding(self):
        """An IOBinding for this session: inputs and outputs bound ahead of
        a run, possibly in GPU memory, as onnxruntime's."""
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        """Runs with the inputs and outputs bound in ``iobinding``; the
        outputs are then in ``iobinding.get_outputs()``."""
        iobinding._iobinding._run(run_options)

    # ---- the model --------------------------------------------------------

    def get_inputs(self):
        return self._inputs_meta

    def get_outputs(self):
        return self._outputs_meta

    def get_overridable_initializers(self):
        return self._overridable_initializers

    def get_modelmeta(self):
        return self._model_meta

    def get_session_options(self):
        return self._sess_options

    # ---- providers --------------------------------------------------------

    def get_providers(self):
        """Long names of the providers that run at least one node, in order."""
        return list(self._providers)

    def get_provider_options(self):
        """{provider name: the options it was given} for get_providers()."""
        return {k: dict(v) for k, v in self._provider_options.items()}

    def set_providers(self, providers=None, provider_options=None):
        """Recreates the session with other providers (None: the default, CPU)."""
        self._create(providers, provider_options)

    def disable_fallback(self):
        """Recreates the session under the strict policy: an unavailable
        requested provider, or a node falling through to a later provider,
        raises instead of warning."""
        self._fallback = "error"
        self._create(self._requested, None)

    def enable_fallback(self):
        """Recreates the session under the default policy (fallback warns)."""
        self._fallback = None
        self._create(self._requested, None)

    # ---- Switchyard additions ----------------------------------------------

    def get_assignment(self):
        """One dict per node, in execution order: node, op, provider, and
        declined: [(provider, reason)] for every provider ahead of it that
        did not take it."""
        return self._sess.assignment()

    def get_assignment_report(self):
        """get_assignment() as readable text, one line per node."""
        return self._sess.assignment_report()

    def get_placement(self):
        """How the graph was split between providers: partitions,
        partition_providers and partition_sizes (in execution order),
        copies_per_run, constant_copies, nodes_per_provider."""
        return self._sess.placement()

    def get_requested_providers(self):
        """Long names of the providers asked for, in priority order."""
        return self._sess.requested_providers()

    # ---- profiling --------------------------------------------------------

    def end_profiling(self):
        """Writes the profile (Chrome trace JSON) and returns its path; ''
        when profiling is off."""
        return self._sess.end_profiling()


# onnxruntime has Session as the base of InferenceSession; some code names it.
Session = InferenceSession


class IOBinding:
    """Inputs and outputs bound to memory ahead of a run (onnxruntime's
    IOBinding). An input bound in CUDA memory is used there without a copy
    when the nodes reading it run on that GPU; an output bound to "cuda"
    stays on the GPU."""

    def __init__(self, session):
        self._iobinding = _C._IOBinding(session._sess)

    def bind_cpu_input(self, name, arr_on_cpu):
        """A copy of a numpy array, or of what run() takes for a sequence or
        optional input (a list of arrays, None)."""
        self._iobinding.bind_cpu_input(name, arr_on_cpu)

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr, buffer_size=None):
        """buffer_ptr: an address (whose size buffer_size, when given,
        is checked against the shape) or a C-contiguous numpy array."""
        self._iobinding.bind_input(name, device_type, device_id, element_type,
                                   None if shape is None else list(shape), buffer_ptr, buffer_size)

    def bind_ortvalue_input(self, name, ortvalue):
        self._iobinding.bind_ortvalue_input(name, ortvalue)

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None, buffer_ptr=None,
                    buffer_size=None):
        """buffer_ptr: None (the run allocates), an address (whose size
        buffer_size, when given, is checked) or a writable C-contiguous
        numpy array the output is written into."""
        self._iobinding.bind_output(name, device_type, device_id, element_type,
                                    None if shape is None else list(shape), buffer_ptr, buffer_size)

    def bind_ortvalue_output(self, name, ortvalue):
        self._iobinding.bind_ortvalue_output(name, ortvalue)

    def get_outputs(self):
        return self._iobinding.get_outputs()

    def copy_outputs_to_cpu(self):
        return self._iobinding.copy_outputs_to_cpu()

    def clear_binding_inputs(self):
        self._iobinding.clear_binding_inputs()

    def clear_binding_outputs(self):
        self._iobinding.clear_binding_outputs()

    def synchronize_inputs(self):
        self._iobinding.synchronize_inputs()

    def synchronize_outputs(self):
        self._iobinding.synchronize_outputs()
