"""``nn.utils.rnn``: padding and packing variable-length sequences, as in PyTorch.

A packed sequence stores time step after time step, each step holding only the sequences still
running: ``data`` has ``sum(batch_sizes)`` rows and ``batch_sizes[t]`` (non-increasing) says how
many belong to step ``t``. The recurrent layers of ``ember.nn`` accept one in place of a padded
batch.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from ... import _creation
from ..._dtypes import float16, float32, float64, int8, int16, int32, int64, uint8
from ..._tensor import Tensor
from ...ops.shape import cat

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """The data and batch sizes of a packed batch of sequences (see the module docstring)."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should "
                    "never be created manually. They should be instantiated by functions like "
                    "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        else:  # PackedSequence((data, batch_sizes), sorted_indices=...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """``data`` converted; the indices follow its device, ``batch_sizes`` stays on CPU."""
        return self._with_data(self.data.to(*args, **kwargs))

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        return self._with_data(self.data.cuda() if device is None else self.data.cuda(device))

    def cpu(self, memory_format=None):
        return self._with_data(self.data.cpu())

    def _with_data(self, data):
        if data is self.data:
            return self
        sorted_indices = _bind(self.sorted_indices, lambda t: t.to(data.device))
        unsorted_indices = _bind(self.unsorted_indices, lambda t: t.to(data.device))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def double(self):
        return self.to(dtype=float64)

    def float(self):
        return self.to(dtype=float32)

    def half(self):
        return self.to(dtype=float16)

    def long(self):
        return self.to(dtype=int64)

    def int(self):
        return self.to(dtype=int32)

    def short(self):
        return self.to(dtype=int16)

    def char(self):
        return self.to(dtype=int8)

    def byte(self):
        return self.to(dtype=uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """The permutation that undoes ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    output = _creation.empty_like(permutation)
    output.scatter_(0, permutation, _creation.arange(0, permutation.numel(),
                                                      device=permutation.device))
    return output


def _int64_cpu(values):
    return _creation.tensor(values, dtype=int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` if ``batch_first``) of given lengths."""
    if not isinstance(lengths, Tensor):
        lengths = _creation.as_tensor(lengths, dtype=int64, device="cpu")
    else:
        lengths = lengths.to(dtype=int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = lengths.sort(descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_padded(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _pack_padded(input, lengths, batch_first):
    """ATen's ``_pack_padded_sequence``: the rows of each run of equal batch size, concatenated."""
    if lengths.dim() != 1 or lengths.device.type != "cpu":
        raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.dim()}D {lengths.device} Long tensor")
    if batch_first:
        input = input.transpose(0, 1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch_size = input.size(1)
    lens = lengths.tolist()
    if len(lens) != batch_size:
        raise RuntimeError("Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lens)} (batch_size={batch_size})")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    steps, batch_sizes, prev = [], [], 0
    for i, length in enumerate(reversed(lens)):  # shortest sequence first
        if length > prev:
            running = batch_size - i  # sequences still running over steps prev..length-1
            steps.append(input[prev:length, :running].reshape(-1, *input.shape[2:]))
            batch_sizes += [running] * (length - prev)
            prev = length
        if length < prev:
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
    return cat(steps), _int64_cpu(batch_sizes)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo ``pack_padded_sequence``: the padded batch and the length of each sequence."""
    max_seq_length = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_seq_length}")
        max_seq_length = total_length
    padded_output, lengths = _pad_packed(sequence.data, sequence.batch_sizes, batch_first,
                                         padding_value, max_seq_length)
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        batch_dim = 0 if batch_first else 1
        return (padded_output.index_select(batch_dim, unsorted_indices),
                lengths[unsorted_indices.cpu()])
    return padded_output, lengths


def _pad_packed(data, batch_sizes, batch_first, padding_value, total_length):
    """ATen's ``_pad_packed_sequence``: each run of equal batch size copied into the padding."""
    sizes = batch_sizes.tolist()
    max_batch, trailing = sizes[0], tuple(data.shape[1:])
    output = _creation.full((total_length, max_batch, *trailing), padding_value,
                            dtype=data.dtype, device=data.device)
    lengths = [0] * max_batch
    offset, prev_batch, prev_i = 0, max_batch, 0
    for i in range(len(sizes) + 1):
        batch = sizes[i] if i < len(sizes) else 0
        if batch != prev_batch:  # steps prev_i..i-1 all had prev_batch rows
            n = prev_batch * (i - prev_i)
            output[prev_i:i, :prev_batch].copy_(
                data[offset:offset + n].view(i - prev_i, prev_batch, *trailing))
            offset += n
            prev_i = i
        for row in range(batch, prev_batch):  # these sequences ended at step i
            lengths[row] = i
        prev_batch = batch
    if batch_first:
        output = output.transpose(0, 1)
    return output, _int64_cpu(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences ``(L_i, *)`` of different lengths into ``(max L, B, *)``, padded."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    max_len = max(s.size(0) for s in sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError("Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    n = len(sequences)
    shape = (n, max_len) if batch_first else (max_len, n)
    out = _creation.full((*shape, *first.shape[1:]), padding_value, dtype=first.dtype,
                         device=first.device)
    for i, seq in enumerate(sequences):
        length = seq.size(0)
        start = max_len - length if padding_side == "left" else 0
        slot = out[i, start:start + length] if batch_first else out[start:start + length, i]
        slot.copy_(seq)
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into a list of its sequences."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    idx = _creation.arange(padded_sequences.shape[1], device=lengths.device)
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences ``(L_i, *)`` (longest first unless ``enforce_sorted=False``)."""
    lengths = _creation.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Undo ``pack_sequence``: the list of sequences."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
