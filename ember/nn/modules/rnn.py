"""``RNN``, ``LSTM``, ``GRU`` and their one-step ``RNNCell``, ``LSTMCell``, ``GRUCell``.

Everything is composed from differentiable ember ops (``linear``, ``chunk``, ``sigmoid``,
``tanh``, ``stack``, ``cat``), so autograd, double backward and the GPU come for free. The
formulas and their order follow ATen's CPU kernels (``aten/src/ATen/native/RNN.cpp``), which
is also why the outputs carry the same ``grad_fn`` as PyTorch's. The one speed trick, also
ATen's: the input projection ``W_ih x + b_ih`` of a whole layer is one matmul over all time
steps; only ``W_hh h`` is computed step by step.
"""
from __future__ import annotations

import math
import numbers
import warnings

from ... import _creation
from ...ops.shape import cat, stack
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .linear import _empty

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


# --------------------------------------------------------------------------- one time step
# ``gi`` is the input's projection ``W_ih x + b_ih``; the state is ``h``, or ``(h, c)`` for LSTM.


def _rnn_tanh_step(gi, h, w_hh, b_hh, w_hr=None):
    return (F.linear(h, w_hh, b_hh) + gi).tanh()


def _rnn_relu_step(gi, h, w_hh, b_hh, w_hr=None):
    return F.relu(F.linear(h, w_hh, b_hh) + gi)


def _lstm_step(gi, state, w_hh, b_hh, w_hr=None):
    h, c = state
    i, f, g, o = (F.linear(h, w_hh, b_hh) + gi).chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:  # LSTM with projections: h is projected down to proj_size
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(gi, h, w_hh, b_hh, w_hr=None):
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, -1)
    r = (h_r + i_r).sigmoid()
    z = (h_z + i_z).sigmoid()
    n = (i_n + h_n * r).tanh()  # the reset gate scales W_hn h + b_hn, as in PyTorch
    return (h - n) * z + n  # = (1 - z) * n + z * h


_STEPS = {"RNN_TANH": _rnn_tanh_step, "RNN_RELU": _rnn_relu_step, "LSTM": _lstm_step,
          "GRU": _gru_step}
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# --------------------------------------------------------------------------- one direction


def _output_of(state):
    return state[0] if isinstance(state, tuple) else state


def _rows(state, start, stop):
    if isinstance(state, tuple):
        return tuple(s[start:stop] for s in state)
    return state[start:stop]


def _cat_rows(states):
    if isinstance(states[0], tuple):
        return tuple(cat(parts) for parts in zip(*states))
    return cat(states)


def _run(step, gis, state, weights, reverse):
    """Apply ``step`` over the time steps' input projections ``gis``: (outputs, final state).

    Step ``t`` runs the first ``len(gis[t])`` rows of the state, a number that never grows
    with ``t`` (all rows for a padded batch; fewer as sequences end for a packed one). Going
    forward, rows that stop keep their last state; going backward, rows join as their
    sequences begin, starting from their initial state (ATen's ``PackedLayer`` and
    ``ReversedPackedLayer``).
    """
    outputs = []
    if not reverse:
        ended = []
        for gi in gis:
            rows, running = gi.shape[0], _output_of(state).shape[0]
            if rows < running:
                ended.append(_rows(state, rows, running))
                state = _rows(state, 0, rows)
            state = step(gi, state, *weights)
            outputs.append(_output_of(state))
        if ended:
            state = _cat_rows([state] + ended[::-1])
        return outputs, state
    initial = state
    if gis[-1].shape[0] < _output_of(initial).shape[0]:
        state = _rows(initial, 0, gis[-1].shape[0])
    for gi in reversed(gis):
        rows, running = gi.shape[0], _output_of(state).shape[0]
        if rows > running:
            state = _cat_rows([state, _rows(initial, running, rows)])
        state = step(gi, state, *weights)
        outputs.append(_output_of(state))
    outputs.reverse()
    return outputs, state


# --------------------------------------------------------------------------- the layers


class RNNBase(Module):
    """Base of ``RNN``, ``LSTM`` and ``GRU``: parameters, checks, and the layer loop."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0, device=None,
                 dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(
                f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(
                f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size

        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
            for direction in range(num_directions):
                shapes = {"weight_ih": (gate_size, layer_input_size),
                          "weight_hh": (gate_size, real_hidden_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for kind, shape in shapes.items():
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(_empty(*shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op: cuDNN's packed weight buffer does not exist here."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # ------------------------------------------------------------------ checks
    def check_input(self, input, batch_sizes):
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). "
                f"Convert input: input.to({weight_dtype}), or convert model: "
                f"model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(
                f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        return self._expected_size(input, batch_sizes, self.proj_size or self.hidden_size)

    def _expected_size(self, input, batch_sizes, size):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return self._map_hidden(lambda h: h.index_select(1, permutation), hx)

    def _map_hidden(self, fn, hx):
        """``fn`` applied to the hidden state (to ``h`` and ``c`` in an LSTM)."""
        return fn(hx)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ------------------------------------------------------------------ forward
    def _name(self):
        return "RNN" if self.mode.startswith("RNN") else self.mode

    def _zero_hidden(self, input, batch):
        num_directions = 2 if self.bidirectional else 1
        return _creation.zeros(self.num_layers * num_directions, batch, self.hidden_size,
                               dtype=input.dtype, device=input.device)

    def _check_hx_dims(self, hx, dims):
        if hx.dim() != dims:
            kind = "batched 3-D" if dims == 3 else "unbatched 2-D"
            raise RuntimeError(f"For {kind} input, hx should also be {dims}-D but got "
                               f"{hx.dim()}-D tensor")

    def _forward(self, input, hx):
        """The ``forward`` of ``RNN``, ``LSTM`` and ``GRU`` (``RNNBase`` itself has none)."""
        packed = isinstance(input, PackedSequence)
        if packed:
            input, batch_sizes, sorted_indices, unsorted_indices = input
            batch = int(batch_sizes[0])
            if hx is not None:
                hx = self.permute_hidden(hx, sorted_indices)
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                word = " tensor" if self._name() == "RNN" else ""
                raise ValueError(f"{self._name()}: Expected input to be 2D or 3D, got "
                                 f"{input.dim()}D{word} instead")
            is_batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not is_batched:
                input = input.unsqueeze(batch_dim)
            if hx is not None:
                self._check_hx_dims(hx, 3 if is_batched else 2)
                if not is_batched:
                    hx = self._map_hidden(lambda h: h.unsqueeze(1), hx)
            batch = input.size(0) if self.batch_first else input.size(1)
        if hx is None:
            hx = self._zero_hidden(input, batch)
        self.check_forward_args(input, hx, batch_sizes)

        if packed:
            gis_of = lambda gi: gi.split(batch_sizes.tolist())
            join = cat
        else:
            if input.size(1 if self.batch_first else 0) == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            if self.batch_first:
                input = input.transpose(0, 1)
            gis_of = lambda gi: gi.unbind(0)
            join = stack
        output, hidden = self._layers(input, hx, gis_of, join)

        if packed:
            output = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return output, self.permute_hidden(hidden, unsorted_indices)
        if self.batch_first:
            output = output.transpose(0, 1)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = self._map_hidden(lambda h: h.squeeze(1), hidden)
        return output, hidden

    def _layers(self, input, hx, gis_of, join):
        """All layers and directions over time-major ``input``: (output, final states).

        ``gis_of`` splits a layer's input projection into time steps, ``join`` puts the step
        outputs back together (``unbind``/``stack`` when padded, ``split``/``cat`` when packed).
        """
        step = _STEPS[self.mode]
        lstm = self.mode == "LSTM"
        initial = list(zip(hx[0].unbind(0), hx[1].unbind(0))) if lstm else hx.unbind(0)
        num_directions = 2 if self.bidirectional else 1
        finals = []
        layer_input = input
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                k = layer * num_directions + direction
                weights = self.all_weights[k]
                w_ih, w_hh = weights[:2]
                b_ih, b_hh = weights[2:4] if self.bias else (None, None)
                w_hr = weights[-1] if self.proj_size > 0 else None
                gis = gis_of(F.linear(layer_input, w_ih, b_ih))
                steps, state = _run(step, gis, initial[k], (w_hh, b_hh, w_hr),
                                    reverse=direction == 1)
                outputs.append(join(steps))
                finals.append(state)
            layer_input = outputs[0] if num_directions == 1 else cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        if lstm:
            return layer_input, (stack([h for h, _ in finals]), stack([c for _, c in finals]))
        return layer_input, stack(finals)


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)`` (or ``relu``)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:  # nonlinearity is RNN's fourth positional argument
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        """``(output, h_n)``: the last layer's ``h_t`` for every ``t``, and each layer's last."""
        return self._forward(input, hx)


class LSTM(RNNBase):
    """Long short-term memory, gates ``i, f, g, o``; ``proj_size > 0`` projects ``h``."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        """``(output, (h_n, c_n))``."""
        return self._forward(input, hx)

    def get_expected_cell_size(self, input, batch_sizes):
        return self._expected_size(input, batch_sizes, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def _map_hidden(self, fn, hx):
        return fn(hx[0]), fn(hx[1])

    def _zero_hidden(self, input, batch):
        num_directions = 2 if self.bidirectional else 1
        shape = (self.num_layers * num_directions, batch)
        kw = dict(dtype=input.dtype, device=input.device)
        return (_creation.zeros(*shape, self.proj_size or self.hidden_size, **kw),
                _creation.zeros(*shape, self.hidden_size, **kw))

    def _check_hx_dims(self, hx, dims):
        if hx[0].dim() != dims or hx[1].dim() != dims:
            kind = "batched 3-D" if dims == 3 else "unbatched 2-D"
            raise RuntimeError(f"For {kind} input, hx and cx should also be {dims}-D but got "
                               f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")


class GRU(RNNBase):
    """Gated recurrent unit, gates ``r, z, n``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        """``(output, h_n)``."""
        return self._forward(input, hx)


# --------------------------------------------------------------------------- the cells


class RNNCellBase(Module):
    """Base of the cells: ``weight_ih``, ``weight_hh`` and, with ``bias``, ``bias_ih/hh``."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gates = num_chunks * hidden_size
        self.weight_ih = Parameter(_empty(gates, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(_empty(gates, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_empty(gates, device=device, dtype=dtype))
            self.bias_hh = Parameter(_empty(gates, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, input, hx, n_states, hidden_name):
        """Checks as PyTorch's; returns 2-D input, the 2-D states, and whether it was batched.

        ``hx`` is a sequence of ``n_states`` tensors or None (zeros).
        """
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    label = f"{hidden_name}[{idx}]" if n_states > 1 else hidden_name
                    raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = [_creation.zeros(input.size(0), self.hidden_size, dtype=input.dtype,
                                  device=input.device)] * n_states
        elif not is_batched:
            hx = [h.unsqueeze(0) for h in hx]
        return input, list(hx), is_batched

    def _check_sizes(self, input, states):
        """ATen's ``check_rnn_cell_forward_input`` and ``..._hidden``."""
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                               f"expected {self.input_size}")
        for k, h in enumerate(states):
            if input.size(0) != h.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{k} "
                                   f"batch size {h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {h.size(1)}, "
                                   f"expected {self.hidden_size}")

    def _step(self, step, input, state):
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        return step(gi, state, self.weight_hh, self.bias_hh)


class RNNCell(RNNCellBase):
    """One step of ``RNN``."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, (hx,), is_batched = self._batched(input, None if hx is None else (hx,), 1,
                                                 "hidden")
        if self.nonlinearity == "tanh":
            step = _rnn_tanh_step
        elif self.nonlinearity == "relu":
            step = _rnn_relu_step
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        self._check_sizes(input, [hx])
        ret = self._step(step, input, hx)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of ``LSTM``: returns ``(h', c')``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, states, is_batched = self._batched(input, hx, 2, "hx")
        if len(states) != 2:
            raise RuntimeError("lstm_cell expects two hidden states")
        self._check_sizes(input, states)
        h, c = self._step(_lstm_step, input, tuple(states))
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One step of ``GRU``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, (hx,), is_batched = self._batched(input, None if hx is None else (hx,), 1,
                                                 "hidden")
        self._check_sizes(input, [hx])
        ret = self._step(_gru_step, input, hx)
        return ret if is_batched else ret.squeeze(0)
