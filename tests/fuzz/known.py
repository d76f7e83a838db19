"""Differences from PyTorch 2.13 that the fuzzer finds and that are understood, each with its
reason. A mismatch matches an entry when its category is the entry's and the entry's pattern
is found in the program up to the line that disagrees, followed by the mismatch's detail.

- ACCEPTED: ember keeps its behaviour on purpose (PyTorch's result is a bug or an artefact of
  one of its kernels, or ember's is the exact one).
- REMAINING: not yet fixed; listed so that the CI slice stays a test of everything else.

The CI test xfails a known mismatch with its reason; the report counts them apart. An entry
is as narrow as the case allows: a new kind of difference is never covered by an old entry.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Known:
    kind: str        # "accepted" or "remaining"
    category: str
    pattern: str     # a regular expression over the program's text and the detail
    reason: str


KNOWN = [
    Known("accepted", "requires_grad", r"(fill_\(|\] = |index_put_?\().*\n.*ember "
          r"requires_grad=False, torch requires_grad=True",
          "PyTorch lets an integer or bool tensor require grad after fill_/index_put_ with a "
          "value that requires grad; ember keeps PyTorch's own rule that only floating and "
          "complex tensors require grad (issue 16, item 3)"),
    Known("accepted", "grad_value", r"\.(sgn|angle)\(|torch\.(sgn|angle)\(",
          "PyTorch's sgn/angle of real inputs return a lazy zero tensor (ZeroTensor) that the "
          "next rules keep at zero; ember's zeros times an infinite or NaN factor give NaN"),
    Known("accepted", "torch_raised_only", r"ZeroTensors are immutable",
          "PyTorch's lazy zero tensor (from sgn) refuses an in-place write its own engine "
          "makes; a PyTorch bug"),
    Known("accepted", "grad_value", r"(sinc|mish|copysign)\((.*\n)*.*create_graph=True",
          "second derivatives where PyTorch's formulas give NaN (sinc at 0, mish far in its "
          "saturation, copysign(x, x) at 0): ember's are the exact ones"),
    Known("accepted", "grad_value", r"(elu|selu|celu)\((.*\n)*.*(nan|xlogy)",
          "elu's derivative at NaN: PyTorch's vectorised kernel sends NaN to the exponential "
          "branch (NaN), its scalar kernel, as ember, to the linear one"),
    Known("accepted", "grad_value", r"(fmod|remainder)\(",
          "fmod/remainder's gradient in the divisor jumps where the quotient is an integer: "
          "float32 rounding (or a zero divisor) picks either side"),
    Known("accepted", "grad_value", r"\.pow\((False|True)\)",
          "pow with a bool exponent: PyTorch differentiates 0 ** -1 (NaN at a zero base), "
          "ember the constant result"),
    Known("accepted", "grad_value", r"(var_mean|std_mean|true_divide|div)\((.*\n)*.*"
          r"(inf|1e\+30|create_graph)",
          "ill-conditioned reductions and quotients (inf or 1e30 inputs, x / x under a "
          "Hessian): both libraries round differently; neither is closer to the exact value"),
    Known("accepted", "grad_value", r"(relu6|hardtanh)\((.*\n)*.*(nan|create_graph)",
          "hardtanh/relu6's derivative at NaN: PyTorch's vectorised kernel (8 elements or "
          "more) blocks it, its scalar kernel, as ember, passes it"),
    Known("accepted", "grad_requires_grad", r"np\.zeros\(\([^)]*\b0\b|, 0\)",
          "requires_grad of a create_graph gradient of an empty tensor: nothing to "
          "differentiate"),
    # Memory layout: ember's results keep NumPy's (an op on a transposed tensor may give a
    # transposed result where PyTorch's kernel writes a contiguous one).
    Known("remaining", "value", r"\.is_contiguous\(\)",
          "is_contiguous of a result: NumPy keeps its input's layout where PyTorch's kernel "
          "writes a contiguous result"),
    Known("remaining", "grad_fn_name", r"(reshape|view|flatten|view_as|reshape_as)\(.*\n.*"
          r"(ViewBackward0|ReshapeAliasBackward0|UnsafeViewBackward0)",
          "reshape's node (View, ReshapeAlias, UnsafeView) follows the memory layout, which "
          "NumPy keeps where PyTorch's kernels make results contiguous"),
    # Error texts and argument checks.
    Known("remaining", "error_message", r"\.(lerp|addcmul|addcdiv)_\(",
          "the in-place methods' argument errors lack PyTorch's \"didn't match because\" "
          "lines"),
    Known("remaining", "error_message", r"\.add_\(.*alpha=",
          "an in-place add with both a wrong alpha and a result dtype it cannot hold: ember "
          "names the alpha first, PyTorch the dtype"),
    Known("remaining", "error_message", r"aminmax\(",
          "aminmax with both outputs modified: ember names output 0, PyTorch output 1"),
    Known("remaining", "ember_raised_only", r"index_(add|fill|copy)\(",
          "index_add/index_fill/index_copy into a zero-size dim: ember refuses the index"),
    Known("remaining", "error_type", r"index_(add|fill|copy)\(",
          "index_copy into a zero-size dim: PyTorch fails in setStorage, ember with an "
          "IndexError"),
    Known("remaining", "ember_raised_only", r"more than one element of the written-to tensor",
          "writes into an expanded tensor that PyTorch allows (masked_fill_, index_put_ of "
          "nothing): ember writes the whole tensor, so it refuses any overlapping one"),
    Known("remaining", "ember_raised_only", r"softmax\((.*\n)*.*not implemented for 'Long'",
          "softmax of an empty integer tensor: PyTorch returns it, ember refuses the dtype"),
    Known("remaining", "torch_raised_only", r"\.detach_\(\)",
          "a saved tensor detached in place: PyTorch refuses the backward, ember runs it"),
    Known("accepted", "torch_raised_only", r"hardsigmoid(.*\n)*.*derivative for "
          r"aten::hardsigmoid_backward is not implemented",
          "hardsigmoid's second derivative: PyTorch has none, ember gives the exact zero"),
    Known("accepted", "value", r"(var_mean|std_mean)\(",
          "the mean of values including inf: PyTorch's Welford kernel gives NaN, ember inf"),
    Known("accepted", "value", r"signbit\(",
          "the sign bit of NaN: NumPy's sqrt of a negative number gives -NaN, PyTorch +NaN"),
    Known("accepted", "value", r"gelu\(",
          "gelu(inf): PyTorch's vectorised kernel gives NaN, its scalar formula inf as ember"),
    Known("accepted", "value", r"\.stride\(\)",
          "strides of tensors with a zero-size dim (PyTorch's are the contiguous ones of the "
          "source array, ember's NumPy's): no element is ever addressed through them"),
]


def known_reason(program, mismatch):
    """``"accepted: ..."`` or ``"remaining: ..."`` for a mismatch that an entry explains."""
    text = "\n".join(s.code for s in program.stmts[:mismatch.step + 1]) + "\n" + mismatch.detail
    for k in KNOWN:
        if k.category == mismatch.category and re.search(k.pattern, text):
            return f"{k.kind}: {k.reason}"
    return None
