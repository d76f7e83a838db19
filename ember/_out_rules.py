"""How each public function PyTorch gives ``out=`` treats it: one ``Rule`` per function, keyed
by its public name (``linalg.``-prefixed in ``torch.linalg``). ``ember/_out.py`` applies them.

PyTorch checks ``out``'s dtype kernel by kernel, so the rule of one function may differ from
its neighbour's; the words here are PyTorch's own, learned by running it
(``tests/test_out_sweep.py`` compares each function with PyTorch, and fails when PyTorch has an
``out=`` function that ember exports without a rule here). Placeholders in a message:
``{result}``/``{out}`` are the dtypes as PyTorch's ScalarType names ('Float'), ``{result_c}``/
``{out_c}`` their C++ names ('float', 'long int'), ``{name}`` the ATen name.
"""
from __future__ import annotations

from . import _dtypes, _errors

__all__ = ["Rule", "RULES"]

_EXACT = "Expected out tensor to have dtype {result_c}, but got {out_c} instead"


def _castable(src, dst):
    return _dtypes.can_cast(src, dst)


# what an out dtype must be, given the result's: the name in a Rule -> the test
_CHECKS = {
    "cast": _castable,  # within the result's category or above (TensorIterator)
    "same": lambda src, dst: src is dst,
    "bool": lambda src, dst: dst is _dtypes.bool,
    "float": lambda src, dst: dst.category >= 2,  # a floating or complex out (then cast)
    "index": lambda src, dst: dst in (_dtypes.int32, _dtypes.int64),
    "any": lambda src, dst: True,
}


class Rule:
    """How one function checks and fills ``out`` (see the module docstring).

    ``check``: a name in ``_CHECKS``, the dtypes of ``out`` allowed; ``message`` and ``error``
    what PyTorch raises for another. ``first``: a rule checked before this one, and before any
    resize (``logsumexp``: a floating out, then castable). ``double_warning``: an elementwise op,
    which warns twice when it resizes and casts. ``warning``: the resize warning (None: none).
    ``resize_first``: the kernel resizes before it checks the dtype. ``resized_message``: the
    words of the dtype error when ``out``'s shape is not the result's (``mv``).
    ``composite``: PyTorch composes the function from others (or has no derivative for it),
    so an argument that requires grad is no error: ``out`` joins the graph by a recorded copy.
    ``grad_of_inputs``: refused when an input requires grad, even where the result
    (``argsort``'s indices) cannot.
    ``factory``: a factory function (``out``'s dtype is made). ``passes_dtype``: a reduction
    computing in ``out``'s dtype (``sum``), ``dtype_message`` when a ``dtype=`` disagrees.
    ``index_rule``: the rule of an int64 part of a several-tensor result (the indices).
    """

    __slots__ = ("aten", "check", "message", "error", "first", "double_warning", "warning",
                 "resize_first", "resized_message", "composite", "factory", "passes_dtype",
                 "dtype_message", "index_rule", "grad_of_inputs")

    def __init__(self, aten=None, check="cast", message=_errors.OUT_CAST, error=RuntimeError,
                 first=None, double_warning=False, warning=_errors.OUT_RESIZED,
                 resize_first=False, resized_message=None, composite=False, factory=False,
                 passes_dtype=False, dtype_message=_EXACT, index_rule=None,
                 grad_of_inputs=False):
        self.aten, self.check, self.message, self.error = aten, _CHECKS[check], message, error
        self.first, self.double_warning, self.warning = first, double_warning, warning
        self.resize_first, self.resized_message = resize_first, resized_message
        self.composite, self.factory, self.passes_dtype = composite, factory, passes_dtype
        self.dtype_message, self.index_rule = dtype_message, index_rule or INDEX
        self.grad_of_inputs = grad_of_inputs

    def refuses(self, src, dst):
        """``(error type, message)`` when ``out`` of dtype ``dst`` cannot take a result of
        ``src``; None when it can (``first`` not included)."""
        return None if self.check(src, dst) else (self.error, self.message)

    def named(self, aten):
        """This rule for the function whose ATen name is ``aten``."""
        copy = object.__new__(Rule)
        for slot in Rule.__slots__:
            setattr(copy, slot, getattr(self, slot))
        copy.aten = aten
        return copy


INDEX = None  # (bound just below; Rule() reads it for its default)
INDEX = Rule(check="same", message=_EXACT)  # an indices part: int64 exactly

ELEMENTWISE = Rule(double_warning=True)  # TensorIterator: cast within categories, two warnings
CAST = Rule()  # the same check, one warning (reductions, composites)
SAME = Rule(check="same", message="Found dtype {out} but expected {result}")
EXACT = Rule(check="same", message=_EXACT)
CAT = Rule(error=TypeError, message="torch.cat(): input types can't be cast to the desired "
                                    "output type {out}")
FACTORY = Rule(check="any", factory=True, warning=None)
REDUCE_IN = Rule(check="any", passes_dtype=True)  # computes in out's dtype


def _group(rule, names):
    """``{name: rule}`` for ``names`` ('name' or 'name:aten', the ATen name in the autograd
    error when it is not the function's own)."""
    table = {}
    for entry in names.split():
        name, _, own = entry.partition(":")
        table[name] = rule.named(own or name.rpartition(".")[2])
    return table


_COMPARISON = Rule(check="any", double_warning=True)  # a bool result casts to any out

RULES = {}
RULES.update(_group(ELEMENTWISE, """acos acosh asin asinh atan atanh arccos:acos arccosh:acosh
    arcsin:asin arcsinh:asinh arctan:atan arctanh:atanh add sub subtract:sub mul multiply:mul div
    divide:div true_divide:div atan2 arctan2:atan2 copysign cos cosh deg2rad rad2deg erf erfc
    erfinv exp exp2 expm1 fmax fmin fmod hypot lerp log log10 log1p log2 logaddexp logaddexp2
    maximum minimum pow reciprocal remainder rsqrt sigmoid sin sinc sinh sqrt square:pow tan
    tanh threshold xlogy addcdiv addcmul outer:mul ger:mul diff:sub nn.functional.normalize:div
    bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift digamma lgamma
    polygamma gcd lcm"""))
RULES.update(_group(_COMPARISON, """eq ne not_equal:ne lt less:lt le less_equal:le gt
    greater:gt ge greater_equal:ge"""))
RULES.update(_group(CAST, "addr angle logit"))
RULES.update(_group(Rule(resize_first=True), "kron:mul mean std var"))  # resized, then checked
RULES.update(_group(Rule(composite=True), "floor_divide"))  # no derivative: no refusal
RULES.update(_group(Rule(check="any"), "logical_and logical_or logical_xor logical_not"))
RULES.update(_group(SAME, """abs absolute:abs ceil clamp clamp_max clamp_min clip:clamp
    fix:trunc floor frac hardshrink neg negative:neg round sgn sign trunc bitwise_not"""))
RULES["conj_physical"] = Rule(aten="conj_physical", check="same", composite=True,
                              message="Found dtype {out} but expected {result}")
RULES["argsort"] = Rule(aten="sort", check="same", message=_EXACT, grad_of_inputs=True)
RULES.update(_group(EXACT, """addmm addmv baddbmm bmm cross:linalg_cross gather index_add
    index_copy inverse:linalg_inv_ex matmul mm norm:linalg_vector_norm renorm scatter
    scatter_add scatter_reduce take_along_dim:gather tril triu aminmax max min sort
    msort:sort topk slogdet:_linalg_slogdet argmax argmin isin
    linalg.cholesky:linalg_cholesky_ex linalg.cross:linalg_cross linalg.det:_linalg_det
    linalg.eigh:_linalg_eigh linalg.eigvalsh:_linalg_eigh linalg.inv:linalg_inv_ex
    linalg.matmul:matmul linalg.qr:linalg_qr linalg.slogdet:_linalg_slogdet
    linalg.solve:_linalg_solve_ex linalg.svd:_linalg_svd linalg.svdvals:_linalg_svd
    linalg.vector_norm:linalg_vector_norm qr:linalg_qr svd:_linalg_svd
    linalg.cholesky_ex:linalg_cholesky_ex linalg.inv_ex:linalg_inv_ex linalg.lu:linalg_lu
    linalg.lu_factor:linalg_lu_factor_ex linalg.lu_factor_ex:linalg_lu_factor_ex
    linalg.lu_solve:linalg_lu_solve linalg.solve_ex:_linalg_solve_ex"""))
for _name in ("eig", "eigvals"):  # castable from the complex result (eigvals: a composite)
    RULES["linalg." + _name] = Rule(aten="linalg_eig", composite=_name == "eigvals", message=(
        f"torch.linalg.{_name}: Expected eigenvalues to be safely castable from {{result}} "
        "dtype, but got eigenvalues with dtype {out}"))
RULES.update(_group(Rule(check="same", message=_EXACT, composite=True),  # (no derivative)
                    """linalg.ldl_factor:linalg_ldl_factor_ex
    linalg.ldl_factor_ex:linalg_ldl_factor_ex linalg.ldl_solve"""))
for _name in ("linalg.householder_product", "orgqr"):
    RULES[_name] = Rule(aten="linalg_householder_product", message=(
        "torch.linalg.householder_product: Expected result to be safely castable from {result} "
        "dtype, but got result with dtype {out}"))
for _name in ("cond", "tensorinv", "tensorsolve"):  # composites: castable, in their words
    RULES["linalg." + _name] = Rule(aten="linalg_" + _name, composite=True, message=(
        f"{'linalg.' if _name == 'cond' else ''}{_name}: Expected result to be safely castable "
        "from {result} dtype, but got result with dtype {out}"))
RULES.update(_group(Rule(check="same", message=_EXACT, composite=True),
                    "softmax log_softmax"))
RULES.update(_group(Rule(check="same", message=_EXACT, composite=True, resize_first=True),
                    "diag"))
RULES.update(_group(CAT, "cat concat:cat concatenate:cat hstack:cat vstack:cat dstack:cat "
                         "column_stack:cat row_stack:cat"))
RULES["stack"] = CAT.named("stack")
RULES["stack"].resize_first = True
RULES.update(_group(FACTORY, """zeros:aten::zeros ones:aten::ones empty:aten::empty
    full:aten::full linspace:aten::linspace eye:aten::eye rand:aten::rand randn:aten::randn
    randint:aten::randint randperm:aten::randperm logspace:aten::logspace range:aten::range"""))
RULES["arange"] = Rule(aten="aten::arange", check="any", factory=True,
                       warning=_errors.ARANGE_OUT_RESIZED)
RULES.update(_group(REDUCE_IN, "sum prod cumsum cumprod"))
for _name in ("cumsum", "cumprod"):
    RULES[_name].check, RULES[_name].error = (lambda src, dst: dst is not _dtypes.bool,
                                              NotImplementedError)
    RULES[_name].message = f'"{_name}_out_cpu" not implemented for \'{{out}}\''
RULES.update(_group(Rule(check="float", passes_dtype=True, error=NotImplementedError,
                         message='"nansum_cpu" not implemented for \'{out}\'',
                         dtype_message="nansum: provided dtype must match dtype of result. "
                                       "Got {out} and {result}.", resize_first=True),
                    "nansum nanmean:nansum"))
RULES["logsumexp"] = Rule(aten="logsumexp", first=Rule(check="float", message="logsumexp(): "
                          "Expected floating point type for result tensor, but got: {out}"))

_CUSTOM = {  # name: (ATen name, check, message, other Rule settings)
    "all": ("all", "bool", "all only supports bool tensor for result, got: {out}", {}),
    "any": ("any", "bool", "any only supports bool tensor for result, got: {out}", {}),
    "amax": ("amax", "same", "Expected the dtype for input and out to match, but got {result} "
             "for input's dtype and {out} for out's dtype.", {}),
    "amin": ("amin", "same", "Expected the dtype for input and out to match, but got {result} "
             "for input's dtype and {out} for out's dtype.", {}),
    "addbmm": ("addbmm", "same", "self and mat2 must have the same dtype, but got {out} and "
               "{result}", {"warning": None}),
    "searchsorted": ("searchsorted", "index", "torch.searchsorted(): output tensor's dtype is "
                     "wrong, it can only be Int(int32) or Long(int64) depending on whether "
                     "out_int32 flag is True, but we got output tensor's dtype {out} and "
                     "out_int32 flag is False", {}),
    "cummax": ("cummax", "same", "expected scalar_type {result} but found {out}", {}),
    "cummin": ("cummin", "same", "expected scalar_type {result} but found {out}", {}),
    "logcumsumexp": ("logcumsumexp", "same", "expected scalar_type {result} but found {out}",
                     {}),
    "dot": ("dot", "same", "result dtype {out} does not match input dtype {result}",
            {"resize_first": True}),
    "vdot": ("vdot", "same", "result dtype {out} does not match input dtype {result}",
             {"resize_first": True}),
    "float_power": ("pow", "same", "the output given to float_power has dtype {out} but the "
                    "operation's result requires dtype {result}", {}),
    "heaviside": ("heaviside", "same", "heaviside is not yet implemented for tensors with "
                  "different dtypes.", {"composite": True}),
    "histc": ("histc", "same", "torch.histogram: input tensor and hist tensor should have the "
              "same dtype, but got input {result_c} and hist {out_c}", {}),
    "index_select": ("index_select", "same", "index_select(): self and result must have the "
                     "same scalar type", {}),
    "masked_select": ("masked_select", "same", "masked_select(): self and result must have "
                      "the same scalar type", {}),
    "inner": ("inner", "same", "tensordot: Expected the output tensor to have dtype {result}, "
              "but got an output tensor with dtype {out}", {"composite": True}),
    "tensordot": ("tensordot", "same", "tensordot: Expected the output tensor to have dtype "
                  "{result}, but got an output tensor with dtype {out}", {"composite": True}),
    "isneginf": ("isneginf", "bool", "isneginf does not support non-boolean outputs.", {}),
    "isposinf": ("isposinf", "bool", "isposinf does not support non-boolean outputs.", {}),
    "signbit": ("signbit", "bool", "signbit does not support non-boolean outputs.", {}),
    "kthvalue": ("kthvalue", "same", "output values must be of same type as input", {}),
    "mode": ("mode", "same", "expected scalar type '{result}' but got '{out}' for values output",
             {}),
    "median": ("median", "same", "Expected tensor for 'values' to have the same type as tensor "
               "for argument #2 'self'; but type {out_legacy} does not equal {result_legacy} "
               "(while checking arguments for median)", {}),
    "mv": ("mv", "same", "addmv input tensors must have the same dtype, but got {out}, "
           "{result}, and {result}", {"resized_message": _EXACT}),
    "nan_to_num": ("nan_to_num", "same", "nan_to_num: dtype of out: {out} should be same as "
                   "input: {result}", {}),
    "nonzero": ("nonzero", "same", "nonzero: Expected out tensor to have scalar type Long but "
                "got scalar type{out}", {}),
    "take": ("take", "same", "take(): self and out expected to have the same dtype, but got "
             "self.dtype = {result} and out.dtype = {out}", {}),
    "where": ("where", "same", "Expected out type to be {result} but got {out}", {}),
    "complex": ("complex", "same", "Expected object of scalar type {result} but got scalar type "
                "{out} for argument 'out'", {}),
    "polar": ("polar", "same", "Expected object of scalar type {result} but got scalar type "
              "{out} for argument 'out'", {}),
    "linalg.matrix_norm": ("linalg_matrix_norm", "same", "linalg.matrix_norm expected out "
                           "tensor dtype {result} but got: {out}", {"composite": True}),
    "linalg.norm": ("linalg_norm", "same", "linalg.norm expected out tensor dtype {result} but "
                    "got: {out}", {"composite": True}),
    "linalg.pinv": ("linalg_pinv", "cast", "linalg.pinv: Expected result to be safely castable "
                    "from {result} dtype, but got result with dtype {out}", {}),
    "linalg.solve_triangular": ("linalg_solve_triangular", "same", "expected scalar type "
                                "{result} but found {out}", {"resize_first": True}),
    "mvlgamma": ("mvlgamma", "cast", "mvlgamma: result type {result} can't be cast to the "
                 "desired output type {result}", {}),
    # (refused by the kernels they end in when an argument requires grad: mm, sum)
    "chain_matmul": ("mm", "same", "multi_dot(): expected out tensor to have dtype "
                     "{result_c} but got {out_c}", {}),
    "linalg.multi_dot": ("mm", "same", "multi_dot(): expected out tensor to have "
                         "dtype {result_c} but got {out_c}", {}),
    "linalg.vecdot": ("sum", "same", "linalg.vecdot: Expected out of dtype{result} but "
                      "found {out}", {}),
    "linalg.matrix_rank": ("linalg_matrix_rank", "cast", "torch.linalg.matrix_rank: Expected "
                           "result to be safely castable from {result} dtype, but got result "
                           "with dtype {out}", {"resize_first": True}),
    "quantile": ("quantile", "same", "quantile() out tensor must be same dtype as the input "
                 "tensor", {"composite": True}),
    "nanquantile": ("nanquantile", "same", "quantile() out tensor must be same dtype as the "
                    "input tensor", {"composite": True}),
    "histogram": ("histogram", "same", "torch.histogram: input tensor and hist tensor should "
                  "have the same dtype, but got input {result_c} and hist {out_c}", {}),
}
for _name, (_aten, _check, _message, _settings) in _CUSTOM.items():
    RULES[_name] = Rule(aten=_aten, check=_check, message=_message, **_settings)
RULES["bucketize"] = RULES["searchsorted"].named("bucketize")
for _name in ("matrix_power", "linalg.matrix_power"):  # castable, then exactly the same
    RULES[_name] = Rule(aten="matmul", check="same", message=_EXACT, resize_first=True,
                        first=Rule(message="matrix_power: Expected result to be safely castable "
                                           "from {result} dtype, but got result with dtype {out}"))
_CUMULATIVE_INDEX = Rule(check="same", message="expected scalar_type Long but found {out}")
RULES["cummax"].index_rule = RULES["cummin"].index_rule = _CUMULATIVE_INDEX

# torch.special (``ember/special.py``): elementwise kernels, named as PyTorch names them in
# its autograd refusal (the aliases by the op they are); the functions without a derivative
# (and ``ndtr``, a composite) take an out= beside arguments that require grad
RULES.update(_group(ELEMENTWISE, """i0 igamma igammac special.entr:special_entr
    special.erfcx:special_erfcx special.i0e:special_i0e special.i1:special_i1
    special.i1e:special_i1e special.log_ndtr:special_log_ndtr special.ndtri:special_ndtri
    special.xlog1py:special_xlog1py special.zeta:special_zeta special.erf:erf special.erfc:erfc
    special.erfinv:erfinv special.exp2:exp2 special.expm1:expm1 special.log1p:log1p
    special.sinc:sinc special.xlogy:xlogy special.digamma:digamma special.psi:digamma
    special.gammaln:lgamma special.expit:sigmoid special.gammainc:igamma
    special.gammaincc:igammac special.i0:i0 special.polygamma:polygamma"""))
RULES["special.ndtr"] = Rule(aten="special_ndtr", composite=True)
RULES.update(_group(Rule(double_warning=True, composite=True), """special.airy_ai
    special.bessel_j0 special.bessel_j1 special.bessel_y0 special.bessel_y1
    special.modified_bessel_i0 special.modified_bessel_i1 special.modified_bessel_k0
    special.modified_bessel_k1 special.scaled_modified_bessel_k0
    special.scaled_modified_bessel_k1 special.spherical_bessel_j0
    special.chebyshev_polynomial_t special.chebyshev_polynomial_u
    special.chebyshev_polynomial_v special.chebyshev_polynomial_w
    special.shifted_chebyshev_polynomial_t special.shifted_chebyshev_polynomial_u
    special.shifted_chebyshev_polynomial_v special.shifted_chebyshev_polynomial_w
    special.hermite_polynomial_h special.hermite_polynomial_he special.laguerre_polynomial_l
    special.legendre_polynomial_p"""))
RULES["special.logit"] = RULES["logit"]
RULES["special.round"] = RULES["round"]
RULES["special.logsumexp"] = RULES["logsumexp"]
RULES["special.multigammaln"] = RULES["mvlgamma"]
