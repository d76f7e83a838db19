"""``ember.nn.functional`` against PyTorch.

The primitives (activations, convolution, and the layers: pooling, normalization, upsampling,
padding, embedding) run through the spec table: gradcheck and
gradgradcheck in float64, and values, dtypes, grad_fn names and vector-Jacobian products against
PyTorch. The composite functions are compared with PyTorch on the same inputs: outputs and
gradients to float32 tolerance.
"""
import inspect

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

from ..opspec import Spec, op_tests

F = "nn.functional"
ACT = [((2, 3),), ((4,),)]


def fn(L):
    return L.nn.functional


def _inplace(name, *args, **kw):
    """``nn.functional.<name>(b, *args, **kw)`` on a non-leaf copy ``b``, which it returns."""
    def f(L, a):
        b = a * 1
        out = getattr(fn(L), name)(b, *args, **kw)
        assert out is b
        return out
    return f


def _at(tag, values, name, *args):
    """``nn.functional.<name>`` at exactly ``values`` (kinks, thresholds, NaN, infinities),
    still differentiable with respect to the spec's input: compared with PyTorch only (finite
    differences cannot see one side of a kink). At most 7 values: PyTorch's CPU kernels run
    shorter tensors through their scalar code, whose formulas ember follows; their vectorised
    code (8 doubles at a time and more) gives another gradient at NaN."""
    def f(L, a):
        x = a - a.detach() + L.tensor(values, dtype=a.dtype)
        return getattr(fn(L), name)(x, *args)
    return Spec(f"{name}_at_{tag}", f, [((len(values),),)], finite_differences=False,
                gradgrad=False)


NAN, INF = float("nan"), float("inf")
NONFINITE = [NAN, INF, -INF]
SIGNED = [-1.0, -0.0, 0.0, 1.0, NAN, INF, -INF]
SHRINK_KINKS = [-0.5, 0.5, -0.0, 0.0, 1.0, -1.0]
KINK_SPECS = [
    _at("kinks", [-1.0, -0.0, 0.0, 3.0, 6.0, 7.0], "relu6"),
    _at("nonfinite", NONFINITE, "relu6"),
    _at("kinks", [-1.0, -0.5, 0.0, 1.0, NAN, -INF, INF], "hardtanh", -0.5, 1.0),
    _at("kinks", [-4.0, -3.0, -1.0, 0.0, 3.0, 4.0], "hardsigmoid"),
    _at("nonfinite", NONFINITE, "hardsigmoid"),
    _at("kinks", [-4.0, -3.0, -1.0, -0.0, 3.0, 4.0], "hardswish"),
    _at("nonfinite", NONFINITE, "hardswish"),
    _at("kinks", SHRINK_KINKS, "hardshrink"),
    _at("nonfinite", NONFINITE, "hardshrink"),
    _at("kinks", SHRINK_KINKS, "softshrink"),
    _at("nonfinite", NONFINITE, "softshrink"),
    _at("kinks", [0.3, 0.2, 0.4, -0.0, NAN, INF, -INF], "threshold", 0.3, 7.0),
    _at("kinks", SIGNED, "elu", 0.8),
    _at("kinks", SIGNED, "selu"),
    _at("kinks", SIGNED, "celu", 0.5),
    _at("kinks", SIGNED, "rrelu"),
    _at("kinks", [-50.0, 0.0, 50.0, NAN, INF, -INF], "logsigmoid"),
    _at("kinks", [-1.0, 0.0, 1.0, INF, -INF], "softsign"),
    _at("kinks", [-1.0, 0.0, 1.0, INF, -INF], "tanhshrink"),
    _at("kinks", [-INF, 0.0, INF], "softplus"),
    Spec("prelu_at_kinks", lambda L, a, w: fn(L).prelu(
        a - a.detach() + L.tensor([-1.0, 0.0, 1.0, NAN, INF, -INF], dtype=a.dtype), w),
        [((6,), (1,))], finite_differences=False, gradgrad=False,
        # at 0 PyTorch's JVP takes the other one-sided slope than its (and ember's) VJP;
        # ember's JVP follows its VJP, as at the ties of test_forward_ad
        xfail={"forward_ad_pytorch": "PyTorch's prelu JVP at 0 differs from its VJP"}),
]


def conv_spec(name, f, xs, ws, bs=None, **kw):
    shapes = [(xs, ws) + ((bs,) if bs else ())]
    if bs:
        return Spec(name, lambda L, x, w, b: f(fn(L))(x, w, b, **kw), shapes, tol=20)
    return Spec(name, lambda L, x, w: f(fn(L))(x, w, **kw), shapes, tol=20)


def c1(m):
    return m.conv1d


def c2(m):
    return m.conv2d


def c3(m):
    return m.conv3d


def ct2(m):
    return m.conv_transpose2d


def ct1(m):
    return m.conv_transpose1d


SPECS = [
    Spec("relu", lambda L, a: fn(L).relu(a), ACT),
    Spec("leaky_relu", lambda L, a: fn(L).leaky_relu(a, 0.2), ACT),
    Spec("elu", lambda L, a: fn(L).elu(a, alpha=1.5), ACT),
    Spec("gelu", lambda L, a: fn(L).gelu(a), ACT),
    Spec("gelu_tanh", lambda L, a: fn(L).gelu(a, approximate="tanh"), ACT),
    Spec("silu", lambda L, a: fn(L).silu(a), ACT),
    Spec("mish", lambda L, a: fn(L).mish(a), ACT),
    Spec("softplus", lambda L, a: fn(L).softplus(a), ACT),
    Spec("softplus_beta", lambda L, a: fn(L).softplus(a, beta=2.0, threshold=1.5), ACT),
    Spec("hardtanh", lambda L, a: fn(L).hardtanh(a, -0.5, 1.0), ACT),
    Spec("relu6", lambda L, a: fn(L).relu6(a), ACT, domain=(-3.0, 9.0)),
    Spec("selu", lambda L, a: fn(L).selu(a), ACT),
    Spec("celu", lambda L, a: fn(L).celu(a), ACT),
    Spec("celu_alpha", lambda L, a: fn(L).celu(a, alpha=0.6), ACT),
    Spec("glu", lambda L, a: fn(L).glu(a), [((2, 4),), ((6,),)]),
    Spec("glu_dim0", lambda L, a: fn(L).glu(a, dim=0), [((4, 3),), ((2, 2, 3),)]),
    Spec("glu_dim_neg2", lambda L, a: fn(L).glu(a, -2), [((3, 2, 2),)]),
    Spec("hardsigmoid", lambda L, a: fn(L).hardsigmoid(a), ACT, domain=(-4.0, 4.0)),
    Spec("hardswish", lambda L, a: fn(L).hardswish(a), ACT, domain=(-4.0, 4.0)),
    Spec("logsigmoid", lambda L, a: fn(L).logsigmoid(a), ACT, domain=(-30.0, 30.0)),
    Spec("softmin", lambda L, a: fn(L).softmin(a, 1), [((2, 3),), ((2, 3, 2),)]),
    Spec("softmin_dim0_dtype", lambda L, a: fn(L).softmin(a, 0, dtype=L.float64), ACT),
    Spec("softshrink", lambda L, a: fn(L).softshrink(a), ACT),
    Spec("softshrink_lambd", lambda L, a: fn(L).softshrink(a, 1.2), ACT),
    Spec("softsign", lambda L, a: fn(L).softsign(a), ACT),
    Spec("tanhshrink", lambda L, a: fn(L).tanhshrink(a), ACT),
    Spec("threshold", lambda L, a: fn(L).threshold(a, 0.3, -4.0), ACT),
    Spec("hardshrink", lambda L, a: fn(L).hardshrink(a), ACT),
    Spec("hardshrink_lambd", lambda L, a: fn(L).hardshrink(a, 1.1), ACT),
    Spec("prelu", lambda L, a, w: fn(L).prelu(a, w),
         [((2, 3, 4), (3,)), ((2, 3), (1,)), ((4,), (1,)), ((), (1,)), ((3, 2), ())]),
    Spec("rrelu_eval", lambda L, a: fn(L).rrelu(a), ACT),
    Spec("rrelu_eval_bounds", lambda L, a: fn(L).rrelu(a, 0.05, 0.5, training=False), ACT),
    # in place: the nodes numbered 1 read the result (elus, rrelu) or a copy of the input
    Spec("selu_", _inplace("selu_"), ACT),
    Spec("celu_", _inplace("celu_", 0.7), ACT),
    Spec("threshold_", _inplace("threshold_", 0.2, 1.5), ACT),
    Spec("rrelu_", _inplace("rrelu_", 0.1, 0.4), ACT),
    Spec("relu6_inplace", _inplace("relu6", inplace=True), ACT, domain=(-3.0, 9.0)),
    Spec("hardsigmoid_inplace", _inplace("hardsigmoid", inplace=True), ACT, domain=(-4.0, 4.0)),
    Spec("hardswish_inplace", _inplace("hardswish", inplace=True), ACT, domain=(-4.0, 4.0)),
    Spec("threshold_inplace", _inplace("threshold", -0.2, 0.5, inplace=True), ACT),
    Spec("rrelu_inplace", _inplace("rrelu", inplace=True), ACT),
    conv_spec("conv1d", c1, (2, 3, 7), (4, 3, 3), (4,)),
    conv_spec("conv1d_stride_pad_dil", c1, (2, 2, 9), (3, 2, 2), (3,), stride=2, padding=1,
              dilation=2),
    conv_spec("conv1d_same", c1, (1, 2, 6), (2, 2, 4), padding="same"),
    conv_spec("conv2d", c2, (2, 3, 5, 4), (2, 3, 3, 2), (2,)),
    conv_spec("conv2d_nobias_stride", c2, (1, 2, 6, 5), (3, 2, 2, 3), stride=(2, 1),
              padding=(1, 2)),
    conv_spec("conv2d_groups_dil", c2, (2, 4, 6, 6), (6, 2, 2, 2), (6,), groups=2, dilation=2,
              padding=1),
    conv_spec("conv2d_same", c2, (1, 2, 5, 5), (2, 2, 2, 3), padding="same", dilation=(1, 2)),
    conv_spec("conv2d_valid", c2, (1, 1, 4, 4), (1, 1, 3, 3), padding="valid"),
    conv_spec("conv_transpose2d", ct2, (2, 3, 3, 4), (3, 2, 2, 3), (2,), stride=2, padding=1,
              output_padding=1),
    conv_spec("conv_transpose2d_groups", ct2, (1, 4, 3, 3), (4, 1, 3, 2), groups=2, dilation=2),
    conv_spec("conv_transpose1d", ct1, (2, 2, 5), (2, 3, 3), (3,), stride=3),
    conv_spec("conv3d", c3, (2, 4, 4, 3, 5), (4, 2, 2, 2, 3), (4,), stride=(1, 2, 1),
              padding=(1, 0, 1), dilation=(1, 1, 2), groups=2),
    conv_spec("conv3d_unbatched_same", c3, (2, 3, 3, 4), (3, 2, 2, 1, 3), padding="same"),
]



def conv_weight_grad(L, x, w):
    """The weight gradient with ``create_graph=True`` (the convolution's double backward)."""
    y = L.nn.functional.conv2d(x, w, stride=2, padding=1, groups=2)
    return L.autograd.grad((y * y).sum(), w, create_graph=True)[0]


SPECS += KINK_SPECS
SPECS.append(Spec("conv2d_weight_grad", conv_weight_grad, [((2, 4, 5, 5), (4, 2, 3, 2))],
                  tol=20))


# --------------------------------------------------------------------------- layer specs
# Pooling, normalization, upsampling, padding and embedding: PyTorch's fused ops.


def f_spec(name, call, shapes, **kw):
    """A spec calling ``nn.functional.<call[0]>(*tensors, *call[1:], **call_kw)``."""
    fname, *args = call
    options = kw.pop("options", {})
    return Spec(name, lambda L, *xs: getattr(fn(L), fname)(*xs, *args, **options), shapes, **kw)


def _with_ties(L, x):
    """``x`` rounded to multiples of 0.5 (many ties), still differentiable as the identity."""
    return x - x.detach() + (x.detach() * 2).round() / 2


def max_pool_ties(L, x):
    return fn(L).max_pool2d(_with_ties(L, x), 2, stride=1, return_indices=True)


def max_pool_nan(L, x):
    """NaN and -inf inputs: PyTorch's maximum is the last NaN; an all -inf window keeps its
    first position."""
    special = np.zeros((1, 2, 4, 5))
    special[0, 0, 0, 1] = special[0, 0, 1, 0] = special[0, 1, 2, 2] = np.nan
    special[0, 1, :2, :] = -np.inf
    return fn(L).max_pool2d(x + L.tensor(special, dtype=x.dtype), 2, stride=1, padding=1,
                            return_indices=True)


def batch_norm_eval(L, x, w, b):
    stats = L.tensor([0.3, -0.2, 0.1], dtype=x.dtype), L.tensor([1.5, 0.5, 2.0], dtype=x.dtype)
    return fn(L).batch_norm(x, *stats, w, b, training=False)


def batch_norm_train_stats(L, x, w, b):
    stats = L.zeros(3, dtype=x.dtype), L.ones(3, dtype=x.dtype)
    return fn(L).batch_norm(x, *stats, w, b, training=True, momentum=0.3, eps=1e-3)


def embedding_spec(name, weight, index, high, exact=True, **kw):
    """``exact=False``: PyTorch's gradient skips ``padding_idx`` rows and divides by the
    index frequency, which is not the derivative finite differences see."""
    return Spec(name, lambda L, w, i: fn(L).embedding(i, w, **kw), [(weight, index)],
                int_args={1: (index, high)}, finite_differences=exact)


def embedding_weight_grad(L, w, v, i):
    """The weight gradient for the output gradient ``v`` (with create_graph=True): linear in
    ``v``, so finite differences check its derivative even with ``padding_idx``."""
    out = fn(L).embedding(i, w, padding_idx=1)
    return L.autograd.grad(out, w, v, create_graph=True)[0]


def interp_spec(name, shape, mode, **kw):
    return f_spec(name, ("interpolate",), [(shape,)], options=dict(mode=mode, **kw))


def pad_spec(name, shape, pad, mode, **kw):
    return f_spec(name, ("pad", pad), [(shape,)], options=dict(mode=mode, **kw))


def create_graph_grad(name, f, shape, distinct=False, **kw):
    """The input gradient with ``create_graph=True``: PyTorch's ``*BackwardBackward0`` ops."""
    def grad(L, x):
        y = f(L, x)
        return L.autograd.grad((y * y).sum(), x, create_graph=True)[0]
    return Spec(name, grad, [(shape,)], distinct=distinct, **kw)


LAYER_SPECS = [
    # max pooling (distinct inputs: no ties, so finite differences see one maximum per window)
    f_spec("max_pool2d", ("max_pool2d", 2), [((2, 2, 5, 4),)], distinct=True),
    f_spec("max_pool2d_options", ("max_pool2d", 3), [((1, 2, 6, 5),)], distinct=True,
           options=dict(stride=(2, 1), padding=1, dilation=(1, 2), ceil_mode=True,
                        return_indices=True)),
    f_spec("max_pool2d_unbatched", ("max_pool2d", (3, 2), 2, (1, 0)), [((2, 5, 5),)],
           distinct=True, options=dict(return_indices=True)),
    f_spec("max_pool1d", ("max_pool1d", 3, 2, 1), [((2, 3, 7),), ((3, 7),)], distinct=True,
           options=dict(return_indices=True)),
    f_spec("max_pool1d_ceil_dilation", ("max_pool1d", 2), [((2, 2, 8),)], distinct=True,
           options=dict(stride=3, dilation=2, ceil_mode=True)),
    f_spec("max_pool3d", ("max_pool3d", 2), [((1, 2, 4, 4, 3),)], distinct=True,
           options=dict(stride=1, padding=(1, 0, 1), return_indices=True)),
    Spec("max_pool2d_ties", max_pool_ties, [((2, 2, 4, 4),)], finite_differences=False,
         gradgrad=False),
    Spec("max_pool2d_nan_inf", max_pool_nan, [((1, 2, 4, 5),)], finite_differences=False,
         gradgrad=False),
    f_spec("adaptive_max_pool2d", ("adaptive_max_pool2d", (3, 4)), [((2, 2, 5, 7),), ((2, 5, 7),)],
           distinct=True, options=dict(return_indices=True)),
    f_spec("adaptive_max_pool2d_none", ("adaptive_max_pool2d", (None, 2)), [((1, 2, 3, 5),)],
           distinct=True),
    f_spec("adaptive_max_pool1d", ("adaptive_max_pool1d", 3), [((2, 2, 7),), ((2, 4),)],
           distinct=True, options=dict(return_indices=True)),
    f_spec("adaptive_max_pool3d", ("adaptive_max_pool3d", (2, 3, 2)), [((1, 2, 3, 5, 4),)],
           distinct=True),
    # average pooling
    f_spec("avg_pool2d", ("avg_pool2d", 2), [((2, 2, 5, 4),)]),
    f_spec("avg_pool2d_exclude_pad_ceil", ("avg_pool2d", 3, 2, 1), [((1, 2, 6, 5),)],
           options=dict(ceil_mode=True, count_include_pad=False)),
    f_spec("avg_pool2d_include_pad_ceil", ("avg_pool2d", (3, 2), (2, 3), (1, 1)),
           [((1, 2, 6, 7),)], options=dict(ceil_mode=True)),
    f_spec("avg_pool2d_divisor_unbatched", ("avg_pool2d", 2, 1), [((2, 4, 3),)],
           options=dict(divisor_override=3)),
    f_spec("avg_pool1d", ("avg_pool1d", 3, 2, 1), [((2, 3, 7),), ((3, 8),)],
           options=dict(ceil_mode=True, count_include_pad=False)),
    f_spec("avg_pool3d", ("avg_pool3d", 2, (1, 2, 1), 1), [((1, 2, 4, 5, 3),)],
           options=dict(count_include_pad=False)),
    f_spec("adaptive_avg_pool2d", ("adaptive_avg_pool2d", (3, 4)), [((2, 2, 5, 7),), ((2, 5, 7),)]),
    f_spec("adaptive_avg_pool2d_none", ("adaptive_avg_pool2d", (None, 2)), [((1, 2, 3, 5),)]),
    f_spec("adaptive_avg_pool2d_mean", ("adaptive_avg_pool2d", 1), [((2, 3, 4, 3),)]),
    f_spec("adaptive_avg_pool1d", ("adaptive_avg_pool1d", 3), [((2, 2, 7),), ((2, 4),)]),
    f_spec("adaptive_avg_pool1d_mean", ("adaptive_avg_pool1d", 1), [((2, 2, 5),)]),
    f_spec("adaptive_avg_pool3d", ("adaptive_avg_pool3d", (2, 3, 2)), [((1, 2, 3, 5, 4),)]),
    # normalization
    Spec("layer_norm", lambda L, x, w, b: fn(L).layer_norm(x, (4, 5), w, b),
         [((3, 4, 5), (4, 5), (4, 5))]),
    f_spec("layer_norm_plain", ("layer_norm", [5]), [((2, 5),), ((5,),)]),
    f_spec("group_norm", ("group_norm", 2), [((2, 4, 3, 2),)]),
    Spec("group_norm_affine", lambda L, x, w, b: fn(L).group_norm(x, 3, w, b, eps=1e-3),
         [((3, 6, 4), (6,), (6,))]),
    Spec("batch_norm_train", lambda L, x, w, b: fn(L).batch_norm(x, None, None, w, b, True),
         [((4, 3, 2, 2), (3,), (3,)), ((5, 3, 2), (3,), (3,))], tol=10),
    f_spec("batch_norm_train_plain", ("batch_norm", None, None), [((5, 3),)],
           options=dict(training=True), tol=10),
    Spec("batch_norm_train_running", batch_norm_train_stats, [((4, 3, 2), (3,), (3,))], tol=10),
    Spec("batch_norm_eval", batch_norm_eval, [((4, 3, 2, 2), (3,), (3,)), ((5, 3), (3,), (3,))]),
    # upsampling
    interp_spec("upsample_nearest1d", (2, 3, 4), "nearest", size=7),
    interp_spec("upsample_nearest2d", (2, 2, 3, 4), "nearest", scale_factor=2),
    interp_spec("upsample_nearest2d_size", (1, 2, 3, 4), "nearest", size=(5, 3)),
    interp_spec("upsample_nearest3d", (1, 2, 2, 3, 2), "nearest", scale_factor=(2, 1.5, 2)),
    interp_spec("upsample_nearest_exact1d", (2, 2, 5), "nearest-exact", size=3),
    interp_spec("upsample_nearest_exact2d", (1, 2, 3, 4), "nearest-exact", size=(5, 7)),
    interp_spec("upsample_nearest_exact3d", (1, 1, 2, 3, 2), "nearest-exact", scale_factor=1.5),
    interp_spec("upsample_linear1d", (2, 3, 5), "linear", size=8),
    interp_spec("upsample_linear1d_ac", (2, 3, 5), "linear", scale_factor=1.7,
                align_corners=True),
    interp_spec("upsample_bilinear2d", (1, 2, 3, 4), "bilinear", scale_factor=2),
    interp_spec("upsample_bilinear2d_ac", (1, 2, 3, 4), "bilinear", size=(5, 3),
                align_corners=True),
    interp_spec("upsample_bilinear2d_down", (1, 2, 5, 6), "bilinear", scale_factor=0.6),
    interp_spec("upsample_bicubic2d", (1, 2, 4, 5), "bicubic", size=(7, 3)),
    interp_spec("upsample_bicubic2d_ac", (1, 2, 4, 5), "bicubic", scale_factor=1.5,
                align_corners=True),
    interp_spec("upsample_trilinear3d", (1, 2, 2, 3, 2), "trilinear", scale_factor=2),
    interp_spec("upsample_trilinear3d_ac", (1, 1, 3, 2, 4), "trilinear", size=(2, 4, 3),
                align_corners=True),
    interp_spec("interpolate_area", (1, 2, 5, 7), "area", size=(2, 3)),
    # padding
    pad_spec("constant_pad", (2, 3, 4), (1, 2), "constant"),
    pad_spec("constant_pad_value_crop", (2, 2, 3, 4), (-1, 2, 1, -1), "constant", value=2.5),
    pad_spec("constant_pad_3d", (1, 2, 2, 3, 2), (1, 0, 0, 1, 2, 1), "constant"),
    pad_spec("reflection_pad1d", (2, 3, 5), (2, 1), "reflect"),
    pad_spec("reflection_pad1d_unbatched_crop", (3, 5), (-1, 3), "reflect"),
    pad_spec("reflection_pad2d", (2, 2, 4, 5), (1, 2, 3, 0), "reflect"),
    pad_spec("reflection_pad3d", (1, 2, 3, 4, 3), (1, 1, 2, 0, 1, 2), "reflect"),
    pad_spec("replication_pad1d", (2, 3, 3), (4, 1), "replicate"),
    pad_spec("replication_pad2d", (3, 4, 5), (1, 2, 3, 0), "replicate"),
    pad_spec("replication_pad3d", (1, 2, 3, 2, 3), (1, 3, 2, 0, 1, 2), "replicate"),
    pad_spec("circular_pad1d", (2, 3, 4), (2, 1), "circular"),
    pad_spec("circular_pad2d", (1, 2, 3, 4), (1, 2, 1, -1), "circular"),
    pad_spec("circular_pad3d", (1, 1, 2, 3, 2), (2, 0, 1, 3, 0, 1), "circular"),
    # embedding
    embedding_spec("embedding", (5, 3), (3, 4), 5),
    embedding_spec("embedding_padding_idx", (5, 3), (4, 3), 5, False, padding_idx=2),
    embedding_spec("embedding_scale_grad_by_freq", (4, 2), (3, 5), 4, False,
                   scale_grad_by_freq=True),
    embedding_spec("embedding_freq_padding", (4, 2), (6,), 4, False, scale_grad_by_freq=True,
                   padding_idx=-1),
    embedding_spec("embedding_scalar_index", (4, 3), (), 4),
    # first derivatives with create_graph=True: PyTorch's named double-backward ops
    create_graph_grad("max_pool2d_grad", lambda L, x: fn(L).max_pool2d(x, 2, 1), (1, 2, 3, 4),
                      distinct=True),
    create_graph_grad("adaptive_max_pool2d_grad",
                      lambda L, x: fn(L).adaptive_max_pool2d(x, (2, 3)), (1, 2, 4, 5),
                      distinct=True),
    create_graph_grad("avg_pool2d_grad", lambda L, x: fn(L).avg_pool2d(x, 2, 1, 1),
                      (1, 2, 3, 4)),
    create_graph_grad("adaptive_avg_pool2d_grad",
                      lambda L, x: fn(L).adaptive_avg_pool2d(x, (2, 3)), (1, 2, 3, 5)),
    create_graph_grad("upsample_nearest2d_grad",
                      lambda L, x: fn(L).interpolate(x, scale_factor=2), (1, 2, 2, 3)),
    create_graph_grad("upsample_bilinear2d_grad", lambda L, x: fn(L).interpolate(
        x, size=(3, 5), mode="bilinear"), (1, 2, 2, 3)),
    create_graph_grad("reflection_pad2d_grad", lambda L, x: fn(L).pad(
        x, (1, 2, 2, 1), mode="reflect"), (1, 2, 3, 4)),
    create_graph_grad("constant_pad_grad", lambda L, x: fn(L).pad(x, (1, 2, -1, 1)),
                      (1, 2, 3, 4)),
    Spec("embedding_weight_grad", embedding_weight_grad, [((5, 3), (3, 4, 3), (3, 4))],
         int_args={2: ((3, 4), 5)}),
]
SPECS += LAYER_SPECS


def instance_norm_running(L, x, w, b):
    """Instance norm in training with running stats (updated in place, as PyTorch)."""
    stats = L.zeros(3, dtype=x.dtype), L.ones(3, dtype=x.dtype)
    return fn(L).instance_norm(x, *stats, w, b, momentum=0.3, eps=1e-3)


def instance_norm_eval(L, x, w, b):
    """``use_input_stats=False``: the running stats normalize every instance."""
    stats = L.tensor([0.3, -0.2, 0.1], dtype=x.dtype), L.tensor([1.5, 0.5, 2.0], dtype=x.dtype)
    return fn(L).instance_norm(x, *stats, w, b, use_input_stats=False)


MORE_LAYER_SPECS = [
    # pixel shuffle: PixelShuffleBackward0 / PixelUnshuffleBackward0, each the other's gradient
    f_spec("pixel_shuffle", ("pixel_shuffle", 2), [((2, 8, 2, 3),), ((4, 3, 2),),
                                                     ((2, 1, 4, 1, 2),)]),
    f_spec("pixel_shuffle_3", ("pixel_shuffle", 3), [((1, 9, 2, 2),)]),
    f_spec("pixel_shuffle_1", ("pixel_shuffle", 1), [((1, 2, 2, 3),)]),
    f_spec("pixel_unshuffle", ("pixel_unshuffle", 2), [((2, 2, 4, 6),), ((1, 4, 2),)]),
    f_spec("pixel_unshuffle_3", ("pixel_unshuffle", 3), [((2, 1, 1, 3, 6),)]),
    # unfold (Im2ColBackward0) and fold (Col2ImBackward0), batched and unbatched
    f_spec("unfold", ("unfold", 2), [((2, 2, 4, 5),), ((3, 3, 3),)]),
    f_spec("unfold_options", ("unfold", (2, 3)), [((2, 2, 4, 5),), ((3, 4, 4),)],
           options=dict(dilation=(1, 2), padding=1, stride=(2, 1))),
    f_spec("unfold_1x1", ("unfold", 1), [((1, 2, 3, 3),)]),
    f_spec("fold", ("fold", (4, 5), 2), [((2, 8, 12),), ((8, 12),)]),
    f_spec("fold_options", ("fold", (5, 6), (2, 3)), [((1, 12, 6),)],
           options=dict(dilation=(2, 1), padding=(1, 0), stride=2)),
    f_spec("fold_overlap", ("fold", 3, 2), [((1, 4, 4),)]),
    create_graph_grad("unfold_grad", lambda L, x: fn(L).unfold(x, 2, padding=1),
                      (1, 2, 3, 3)),
    create_graph_grad("pixel_shuffle_grad", lambda L, x: fn(L).pixel_shuffle(x, 2),
                      (1, 4, 2, 3)),
    # instance norm: batch norm over (1, N * C, ...), viewed back (ViewBackward0)
    Spec("instance_norm", lambda L, x, w, b: fn(L).instance_norm(x, weight=w, bias=b),
         [((2, 3, 4), (3,), (3,)), ((2, 3, 2, 3), (3,), (3,))], tol=10),
    f_spec("instance_norm_plain", ("instance_norm",), [((3, 2, 5),), ((1, 2, 2, 2, 2),)],
           tol=10),
    Spec("instance_norm_running", instance_norm_running, [((2, 3, 4), (3,), (3,))], tol=10),
    Spec("instance_norm_eval", instance_norm_eval, [((2, 3, 4), (3,), (3,))]),
    # dropout with p=1: ``input * zeros(())`` (MulBackward0) in every form
    f_spec("dropout1d_p1", ("dropout1d", 1.0), [((2, 3, 4),), ((3, 4),)]),
    f_spec("dropout2d_p1", ("dropout2d", 1.0), [((2, 3, 2, 2),)]),
    f_spec("dropout3d_p1", ("dropout3d", 1.0), [((2, 3, 2, 2, 2),), ((3, 2, 2, 2),)]),
    f_spec("alpha_dropout_p1", ("alpha_dropout", 1.0, True), [((2, 3),)]),
    f_spec("feature_alpha_dropout_p1", ("feature_alpha_dropout", 1.0, True), [((2, 3, 2),)]),
]
SPECS += MORE_LAYER_SPECS

test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)
test_gradgradcheck = pytest.mark.slow(test_gradgradcheck)  # the convolutions' take seconds


# --------------------------------------------------------------------------- composites

def _rand(shape, seed, lo=-2.0, hi=2.0):
    return np.random.default_rng(seed).uniform(lo, hi, size=shape)


def compare(torch, f, arrays, ints=(), dtype="float32", grads=True, tol=None):
    """Run ``f(lib, *tensors)`` in both libraries; compare outputs and input gradients."""
    results = []
    for L in (ember, torch):
        dt = getattr(L, dtype)
        ts = [L.tensor(a, dtype=dt, requires_grad=grads) for a in arrays]
        ts += [L.tensor(i) for i in ints]
        out = f(L, *ts)
        outs = out if isinstance(out, tuple) else (out,)
        gs = []
        if grads:
            rng = np.random.default_rng(7)
            fl = [o for o in outs if o.requires_grad]
            vs = [L.tensor(rng.uniform(-1, 1, size=tuple(o.shape)), dtype=o.dtype) for o in fl]
            L.autograd.backward(fl, vs)
            gs = [t.grad for t in ts[:len(arrays)]]
        results.append((outs, gs))
    (eo, eg), (to, tg) = results
    tol = tol or (dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else
                  dict(rtol=1e-10, atol=1e-12))
    assert len(eo) == len(to)
    for e, t in zip(eo, to):
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **tol)
    for e, t in zip(eg, tg):
        assert (e is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(e.numpy(), t.numpy(), **tol)


def test_softmax_reexported():
    # ``torch.softmax`` also takes ``axis=`` (PyTorch's argument parser), ``F.softmax`` does
    # not: the former wraps the kernel (``_tensor_methods.numpy_keywords``, and ``out=``);
    # ``F.softmax`` calls the same kernel after PyTorch's deprecated implicit ``dim``.
    from ember.ops import reduction
    for name in ("softmax", "log_softmax"):
        kernel = getattr(reduction, name)
        assert inspect.unwrap(getattr(ember, name)) is kernel
        public = getattr(fn(ember), name)
        assert list(inspect.signature(public).parameters) == ["input", "dim", "_stacklevel",
                                                               "dtype"]  # PyTorch's
        x = ember.randn(3, 4)
        assert (public(x, 1) == kernel(x, 1)).all()
    assert "binary_cross_entropy_with_logits" in fn(ember).__all__


def test_sigmoid_tanh_linear(torch):
    compare(torch, lambda L, a: fn(L).sigmoid(a) + fn(L).tanh(a), [_rand((2, 3), 0)])
    compare(torch, lambda L, x, w, b: fn(L).linear(x, w, b),
            [_rand((4, 3), 1), _rand((5, 3), 2), _rand((5,), 3)])
    compare(torch, lambda L, x, w: fn(L).linear(x, w), [_rand((2, 4, 3), 1), _rand((5, 3), 2)])


def test_one_hot(torch):
    idx = np.array([[0, 2], [1, 3]])
    e = fn(ember).one_hot(ember.tensor(idx))
    t = fn(torch).one_hot(torch.tensor(idx))
    assert str(e.dtype) == str(t.dtype)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    np.testing.assert_array_equal(fn(ember).one_hot(ember.tensor(idx), 6).numpy(),
                                  fn(torch).one_hot(torch.tensor(idx), 6).numpy())
    for L in (ember, torch):
        with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
            fn(L).one_hot(L.tensor(idx), 3)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad(torch, mode):
    x = _rand((2, 3, 4, 5), 0)
    compare(torch, lambda L, a: fn(L).pad(a, (1, 2), mode=mode), [x[0]])
    compare(torch, lambda L, a: fn(L).pad(a, (2, 1, 1, 3), mode=mode), [x])
    compare(torch, lambda L, a: fn(L).pad(a, (1, 1, 2, 0, 1, 1), mode=mode), [x])
    if mode == "constant":
        compare(torch, lambda L, a: fn(L).pad(a, (1, 1, 0, 2, 1, 0), value=2.5), [x])
        compare(torch, lambda L, a: fn(L).pad(a, (-1, 2)), [x])


def test_pad_errors(torch):
    for L in (ember, torch):
        with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 4D"):
            fn(L).pad(L.ones(2, 3, 4, 5), (1, 2), mode="reflect")
        with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
            fn(L).pad(L.ones(2, 3, 4), (1, 2), mode="foo")


def test_embedding(torch):
    w = _rand((6, 3), 0)
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    compare(torch, lambda L, a, i: fn(L).embedding(i, a), [w], [idx])
    compare(torch, lambda L, a, i: fn(L).embedding(i, a, padding_idx=2), [w], [idx])


@pytest.mark.parametrize("kw", [{}, {"stride": 1}, {"stride": 2, "padding": 1},
                                {"padding": 1, "dilation": 2}, {"ceil_mode": True}])
def test_max_pool(torch, kw):
    x = np.random.default_rng(0).permutation(2 * 3 * 7 * 6).reshape(2, 3, 7, 6) / 10.0
    compare(torch, lambda L, a: fn(L).max_pool2d(a, 3, **kw), [x])
    compare(torch, lambda L, a: fn(L).max_pool1d(a, 2, **kw), [x[:, :, 0]])
    compare(torch, lambda L, a: fn(L).max_pool2d(a, (2, 3), return_indices=True, **kw), [x])


@pytest.mark.parametrize("kw", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 1, "padding": 1},
                                {"kernel_size": 2, "stride": 1, "dilation": 2},
                                {"output_size": (4, 3)}])
def test_max_pool_signed_zeros_and_nan_bit_for_bit(torch, kw):
    """Windows of +0.0, -0.0, NaN and -inf: PyTorch's value (the sign of the first maximum,
    the last NaN), index and gradient, bit for bit."""
    x = np.random.default_rng(0).choice(np.array([-0.0, 0.0, 1.0, -np.inf, np.nan], np.float32),
                                        size=(2, 3, 6, 7), p=[0.35, 0.35, 0.1, 0.15, 0.05])
    name = "adaptive_max_pool2d" if "output_size" in kw else "max_pool2d"
    results = []
    for L in (ember, torch):
        t = L.tensor(x, requires_grad=True)
        out, index = getattr(fn(L), name)(t, **kw, return_indices=True)
        (grad,) = L.autograd.grad(out, t, L.ones(out.shape))
        results.append([out.detach().numpy().view(np.uint32), index.numpy(), grad.numpy()])
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)


def test_max_pool_gradient_goes_to_argmax():
    x = ember.tensor([[[1.0, 5.0, 2.0, 3.0]]], requires_grad=True)
    fn(ember).max_pool1d(x, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[[0, 1, 0, 1]]])


@pytest.mark.parametrize("kw", [{}, {"stride": 1}, {"stride": 2, "padding": 1},
                                {"padding": 1, "count_include_pad": False}])
def test_avg_pool(torch, kw):
    x = _rand((2, 3, 7, 6), 0)
    compare(torch, lambda L, a: fn(L).avg_pool2d(a, 3, **kw), [x])
    compare(torch, lambda L, a: fn(L).avg_pool1d(a, 3, **kw), [x[:, :, 0]])


def test_avg_pool_divisor(torch):
    compare(torch, lambda L, a: fn(L).avg_pool2d(a, 2, divisor_override=3),
            [_rand((1, 2, 4, 4), 0)])


@pytest.mark.parametrize("size", [(1, 1), (2, 3), (3, 5), 4, (None, 2)])
def test_adaptive_avg_pool2d(torch, size):
    compare(torch, lambda L, a: fn(L).adaptive_avg_pool2d(a, size), [_rand((2, 3, 7, 5), 0)])


def test_batch_norm(torch):
    x = _rand((4, 3, 2, 2), 0)
    w, b = _rand((3,), 1), _rand((3,), 2)
    stats = {}
    for L in (ember, torch):
        rm, rv = L.zeros(3, dtype=L.float64), L.ones(3, dtype=L.float64)
        fn(L).batch_norm(L.tensor(x), rm, rv, training=True, momentum=0.2)
        stats[L.__name__] = (rm.numpy(), rv.numpy())
    np.testing.assert_allclose(*[s[0] for s in stats.values()], rtol=1e-10)
    np.testing.assert_allclose(*[s[1] for s in stats.values()], rtol=1e-10)
    rm, rv = np.array([0.1, -0.2, 0.3]), np.array([1.5, 0.5, 2.0])
    compare(torch, lambda L, a, c, d: fn(L).batch_norm(a, None, None, c, d, training=True),
            [x, w, b])
    compare(torch, lambda L, a, c, d: fn(L).batch_norm(
        a, L.tensor(rm, dtype=a.dtype), L.tensor(rv, dtype=a.dtype), c, d), [x, w, b])
    compare(torch, lambda L, a: fn(L).batch_norm(a, None, None, training=True),
            [_rand((5, 3), 3)])


def test_layer_group_norm(torch):
    x = _rand((2, 4, 3), 0)
    compare(torch, lambda L, a, c, d: fn(L).layer_norm(a, (4, 3), c, d),
            [x, _rand((4, 3), 1), _rand((4, 3), 2)])
    compare(torch, lambda L, a: fn(L).layer_norm(a, [3]), [x])
    compare(torch, lambda L, a, c, d: fn(L).group_norm(a, 2, c, d),
            [_rand((2, 4, 3, 2), 3), _rand((4,), 1), _rand((4,), 2)])
    for L in (ember, torch):
        with pytest.raises(RuntimeError, match="Expected number of channels in input to be "
                                               "divisible by num_groups"):
            fn(L).group_norm(L.ones(2, 4, 3), 3)


@pytest.mark.parametrize("kw", [{"size": (5, 7)}, {"scale_factor": 2}, {"size": (2, 3)},
                                {"scale_factor": 1.5}])
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bilinear_ac"])
def test_interpolate(torch, kw, mode):
    extra = {}
    if mode == "bilinear_ac":
        mode, extra = "bilinear", {"align_corners": True}
    compare(torch, lambda L, a: fn(L).interpolate(a, mode=mode, **kw, **extra),
            [_rand((2, 3, 4, 5), 0)])


def test_conv_errors_and_unbatched(torch):
    compare(torch, lambda L, x, w: fn(L).conv2d(x, w, padding=1),
            [_rand((3, 5, 5), 0), _rand((2, 3, 3, 3), 1)])
    for L in (ember, torch):
        with pytest.raises(RuntimeError, match="expected input"):
            fn(L).conv2d(L.ones(1, 4, 5, 5), L.ones(2, 3, 3, 3))
        with pytest.raises(RuntimeError, match="padding='same' is not supported for strided "
                                             "convolutions"):
            fn(L).conv2d(L.ones(1, 3, 5, 5), L.ones(2, 3, 3, 3), stride=2, padding="same")


def test_conv_dtype_errors(torch):
    for L in (ember, torch):
        with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
            fn(L).conv2d(L.ones(1, 2, 4, 4), L.ones(3, 2, 2, 2, dtype=L.float64))
        with pytest.raises(RuntimeError, match=r"Input type \(float\) and bias type \(double\) "
                                               "should be the same"):
            fn(L).conv2d(L.ones(1, 2, 4, 4), L.ones(3, 2, 2, 2), L.ones(3, dtype=L.float64))


def test_conv_float32_large(torch):
    compare(torch, lambda L, x, w, b: fn(L).conv2d(x, w, b, stride=2, padding=2, groups=2),
            [_rand((4, 6, 16, 15), 0), _rand((8, 3, 5, 5), 1), _rand((8,), 2)],
            tol=dict(rtol=1e-4, atol=1e-4))


def test_composite_gradcheck():
    def x(shape, seed, lo=-2.0, hi=2.0):
        return ember.tensor(_rand(shape, seed, lo, hi), dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda a: fn(ember).max_pool2d(a, 2),
                     [ember.tensor(np.random.default_rng(0).permutation(16).reshape(1, 1, 4, 4)
                                   / 4.0, dtype=ember.float64, requires_grad=True)])
    assert gradcheck(lambda a: fn(ember).avg_pool2d(a, 2, padding=1), [x((1, 2, 3, 3), 1)])
    assert gradcheck(lambda a: fn(ember).interpolate(a, scale_factor=2, mode="bilinear"),
                     [x((1, 1, 3, 3), 2)])
    assert gradcheck(lambda a: fn(ember).group_norm(a, 2), [x((2, 4, 3), 3)])
    assert gradcheck(lambda a: fn(ember).cross_entropy(a, ember.tensor([0, 2]),
                                                       label_smoothing=0.1), [x((2, 3), 4)])


# --------------------------------------------------------------------------- layers: extras

def _x(L, *shape, **kw):
    return L.ones(*shape, **kw)


LAYER_ERRORS = [
    lambda L: fn(L).max_pool2d(_x(L, 2, 3, 6, 6), 2, padding=2),
    lambda L: fn(L).max_pool2d(_x(L, 2, 3, 6, 6), 3, padding=2, dilation=2),
    lambda L: fn(L).max_pool2d(_x(L, 2, 3, 6, 6), 0),
    lambda L: fn(L).max_pool2d(_x(L, 2, 3, 6, 6), 0, stride=1),
    lambda L: fn(L).max_pool2d(_x(L, 2, 3, 6, 6), 2, dilation=0),
    lambda L: fn(L).max_pool2d(_x(L, 6, 6), 2),
    lambda L: fn(L).max_pool2d(_x(L, 2, 3, 6, 6), 7),
    lambda L: fn(L).max_pool2d(_x(L, 2, 3, 6, 6), (2, 2, 2)),
    lambda L: fn(L).max_pool2d(_x(L, 2, 3, 6, 6), 2, stride=(1, 1, 1)),
    lambda L: fn(L).max_pool2d(_x(L, 2, 3, 6, 6), 2, padding=-1),
    lambda L: fn(L).max_pool3d(_x(L, 1, 2, 3, 6, 6), 3, padding=2, dilation=2),
    lambda L: fn(L).max_pool3d(_x(L, 1, 2, 3, 6, 6), 0, stride=1),
    lambda L: fn(L).max_pool3d(_x(L, 1, 2, 3, 6, 6), 7),
    lambda L: fn(L).max_pool1d(_x(L, 3, 6, requires_grad=True), 2, padding=2),
    lambda L: fn(L).max_pool1d(_x(L, 2, 3, 6, 6), 2),
    lambda L: fn(L).max_pool1d(_x(L, 3, 6), 0),
    lambda L: fn(L).max_pool1d(_x(L, 3, 6), 7),
    lambda L: fn(L).max_pool1d(_x(L, 3, 6), (2, 2)),
    lambda L: fn(L).avg_pool2d(_x(L, 2, 3, 6, 6), 2, padding=2),
    lambda L: fn(L).avg_pool2d(_x(L, 2, 3, 6, 6), 7),
    lambda L: fn(L).avg_pool2d(_x(L, 2, 3, 6, 6), 0, stride=1),
    lambda L: fn(L).avg_pool2d(_x(L, 6, 6), 2),
    lambda L: fn(L).avg_pool2d(_x(L, 1, 2, 3, 6, 6), 2),
    lambda L: fn(L).avg_pool2d(_x(L, 2, 3, 6, 6), 2, divisor_override=0),
    lambda L: fn(L).avg_pool2d(_x(L, 2, 3, 6, 6), (2, 2, 2)),
    lambda L: fn(L).avg_pool1d(_x(L, 2, 3, 6, 6), 2),
    lambda L: fn(L).avg_pool1d(_x(L, 3, 6), 2, padding=2),
    lambda L: fn(L).avg_pool1d(_x(L, 3, 6), 7),
    lambda L: fn(L).avg_pool1d(_x(L, 3, 6), (2, 2)),
    lambda L: fn(L).adaptive_avg_pool2d(_x(L, 6, 6), 2),
    lambda L: fn(L).adaptive_avg_pool2d(_x(L, 2, 3, 6, 6), (1, 2, 3)),
    lambda L: fn(L).adaptive_avg_pool2d(_x(L, 2, 3, 0, 4), 2),
    lambda L: fn(L).adaptive_avg_pool3d(_x(L, 2, 3, 6, 6), (1, 1)),
    lambda L: fn(L).adaptive_avg_pool1d(_x(L, 2, 3, 6, 6), 2),
    lambda L: fn(L).adaptive_avg_pool1d(_x(L, 3, 6), (2, 2)),
    lambda L: fn(L).adaptive_max_pool2d(_x(L, 6, 6), 2),
    lambda L: fn(L).adaptive_max_pool2d(_x(L, 2, 3, 6, 6), (1, 2, 3)),
    lambda L: fn(L).adaptive_max_pool2d(_x(L, 2, 3, 0, 4), 2),
    lambda L: fn(L).adaptive_max_pool3d(_x(L, 6, 6), 1),
    lambda L: fn(L).adaptive_max_pool1d(_x(L, 2, 3, 6, 6), 2),
    lambda L: fn(L).adaptive_max_pool1d(_x(L, 3, 6), (2, 2)),
    lambda L: fn(L).max_pool1d(_x(L, 3, 6), 2, stride=(1, 1)),
    lambda L: fn(L).avg_pool1d(_x(L, 3, 6), 2, stride=(1, 1)),
    lambda L: fn(L).max_pool3d(_x(L, 1, 2, 3, 6, 6), (2, 2)),
    lambda L: fn(L).avg_pool3d(_x(L, 1, 2, 3, 6, 6), 2, padding=2),
    lambda L: fn(L).layer_norm(_x(L, 2, 3, 6), (5,)),
    lambda L: fn(L).layer_norm(_x(L, 2, 3, 6), 6),
    lambda L: fn(L).layer_norm(_x(L, 2, 3, 6), (6,), _x(L, 5)),
    lambda L: fn(L).layer_norm(_x(L, 2, 3, 6), (6,), None, _x(L, 5)),
    lambda L: fn(L).group_norm(_x(L, 2, 3, 6), 4),
    lambda L: fn(L).group_norm(_x(L, 2, 3, 6), 3, _x(L, 4)),
    lambda L: fn(L).group_norm(_x(L, 6), 3),
    lambda L: fn(L).group_norm(_x(L, 1, 3), 3),
    lambda L: fn(L).batch_norm(_x(L, 1, 3), None, None, training=True),
    lambda L: fn(L).batch_norm(_x(L, 1, 3, 1), None, None, training=True),
    lambda L: fn(L).batch_norm(_x(L, 2, 3, 4), None, None, _x(L, 4), training=True),
    lambda L: fn(L).batch_norm(_x(L, 2, 3, 4), _x(L, 4), _x(L, 4)),
    lambda L: fn(L).batch_norm(_x(L, 2, 3, 4), None, None),
    lambda L: fn(L).batch_norm(_x(L, 2, 3, 4), _x(L, 3), None),
    lambda L: fn(L).batch_norm(_x(L, 2, 3, 4), _x(L, 3), _x(L, 3), training=True,
                               momentum=None),
    lambda L: fn(L).batch_norm(_x(L, 2, 3, 4), _x(L, 3), _x(L, 3), training=True, eps=0.0),
    lambda L: fn(L).interpolate(_x(L, 2, 3, 4, 4), size=3, scale_factor=2),
    lambda L: fn(L).interpolate(_x(L, 2, 3, 4, 4)),
    lambda L: fn(L).interpolate(_x(L, 2, 3, 4, 4), size=3, mode="foo"),
    lambda L: fn(L).interpolate(_x(L, 3, 4, 4), size=3, mode="bilinear"),
    lambda L: fn(L).interpolate(_x(L, 2, 3, 4, 4), size=3, mode="linear"),
    lambda L: fn(L).interpolate(_x(L, 3, 4, 4), size=3, mode="bicubic"),
    lambda L: fn(L).interpolate(_x(L, 2, 3, 4, 4), size=3, align_corners=True),
    lambda L: fn(L).interpolate(_x(L, 2, 3, 4, 4), size=(3, 3, 3)),
    lambda L: fn(L).interpolate(_x(L, 2, 3, 4, 4), scale_factor=(2, 2, 2)),
    lambda L: fn(L).interpolate(_x(L, 4, 4), size=3),
    lambda L: fn(L).interpolate(_x(L, 2, 3, 4, 4), size=3, mode="nearest", antialias=True),
    lambda L: fn(L).interpolate(_x(L, 2, 3, 4, 4), size=3, recompute_scale_factor=True),
    lambda L: fn(L).interpolate(_x(L, 2, 3, 4), size=0),
    lambda L: fn(L).interpolate(_x(L, 2, 3, 4, 4), scale_factor=0.1, mode="bilinear"),
    lambda L: fn(L).interpolate(_x(L, 1, 1, 2, 3, 4), size=0),
    lambda L: fn(L).interpolate(_x(L, 2, 3, 4, 4), size=2, mode="lanczos"),
    lambda L: fn(L).pad(_x(L, 2, 3, 6, 6), (1,)),
    lambda L: fn(L).pad(_x(L, 2, 3, 6, 6), (1,) * 10),
    lambda L: fn(L).pad(_x(L, 2, 3, 6, 6), (1, 1), mode="foo"),
    lambda L: fn(L).pad(_x(L, 2, 3, 6, 6), (1, 1), mode="reflect"),
    lambda L: fn(L).pad(_x(L, 6, 6), (1, 1, 1, 1), mode="replicate"),
    lambda L: fn(L).pad(_x(L, 2, 3, 6, 6), (1, 1, 1, 1), mode="reflect", value=1.0),
    lambda L: fn(L).pad(_x(L, 3, 6, 6), (6, 1), mode="reflect"),
    lambda L: fn(L).pad(_x(L, 3, 6, 6), (1, 6), mode="reflect"),
    lambda L: fn(L).pad(_x(L, 2, 3, 6, 6), (1, 1, 6, 1), mode="reflect"),
    lambda L: fn(L).pad(_x(L, 2, 3, 4, 5, 6), (1, 1, 1, 1, 4, 1), mode="reflect"),
    lambda L: fn(L).pad(_x(L, 3, 6, 6), (-4, -3), mode="reflect"),
    lambda L: fn(L).pad(_x(L, 3, 6, 6), (-3, -3), mode="replicate"),
    lambda L: fn(L).pad(_x(L, 2, 3, 6, 6), (-4, -3, -4, -3), mode="reflect"),
    lambda L: fn(L).pad(_x(L, 2, 3, 6, 6), (-4, -3, -4, -3), mode="replicate"),
    lambda L: fn(L).pad(_x(L, 1, 2, 3, 6, 6), (-4, -3, -4, -3, -4, -4), mode="replicate"),
    lambda L: fn(L).pad(_x(L, 2, 3, 6, 6), (0, 0, -4, -3), mode="replicate"),
    lambda L: fn(L).pad(_x(L, 2, 3, 0), (1, 1), mode="reflect"),
    lambda L: fn(L).pad(_x(L, 2, 3, 0, 4), (1, 1, 1, 1), mode="replicate"),
    lambda L: fn(L).pad(_x(L, 2, 3, 6, 6), (7, 1, 1, 1), mode="circular"),
    lambda L: fn(L).pad(_x(L, 3, 6, 6), (-4, -3), mode="circular"),
    lambda L: fn(L).pad(_x(L, 2, 3, 6, 6), (-7, 1)),
    lambda L: fn(L).pad(_x(L, 2, 3, 6, 6), (1, -8)),
    lambda L: fn(L).embedding(L.tensor([0.0, 1.0]), _x(L, 3, 2)),
    lambda L: fn(L).embedding(L.tensor([0, 3]), _x(L, 3, 2)),
    lambda L: fn(L).embedding(L.tensor([0, -1]), _x(L, 3, 2)),
    lambda L: fn(L).embedding(L.tensor([0, 1]), _x(L, 3, 2), padding_idx=3),
    lambda L: fn(L).embedding(L.tensor([0, 1]), _x(L, 3, 2), padding_idx=-4),
    lambda L: fn(L).embedding(L.tensor([0, 1]), _x(L, 3)),
    lambda L: fn(L).batch_norm(_x(L, 2, 3, dtype=L.float64), _x(L, 3), _x(L, 3)),
    lambda L: fn(L).batch_norm(_x(L, 2, 3), None, None, _x(L, 3, dtype=L.float64),
                               training=True),
    lambda L: fn(L).layer_norm(_x(L, 2, 3, dtype=L.float64), (3,), _x(L, 3)),
    lambda L: fn(L).group_norm(_x(L, 2, 3), 3, _x(L, 3, dtype=L.float64)),
]


@pytest.mark.parametrize("case", range(len(LAYER_ERRORS)))
def test_layer_errors(torch, case):
    """Bad arguments raise PyTorch's exception type with PyTorch's message."""
    raised = []
    for L in (ember, torch):
        with pytest.raises(Exception) as info:
            LAYER_ERRORS[case](L)
        raised.append((type(info.value).__name__, str(info.value)))
    assert raised[0] == raised[1]


def test_layer_grad_fn_names(torch):
    """The node each function leaves, batched and unbatched (1-d variants end in a squeeze)."""
    img = np.ones((2, 3, 6, 6))
    calls = [
        lambda L, x: fn(L).max_pool1d(x[0], 2), lambda L, x: fn(L).max_pool1d(x[0, 0], 2),
        lambda L, x: fn(L).avg_pool1d(x[0], 2), lambda L, x: fn(L).avg_pool1d(x[0, 0], 2),
        lambda L, x: fn(L).max_pool2d(x[0], 2), lambda L, x: fn(L).avg_pool2d(x[0], 2),
        lambda L, x: fn(L).adaptive_avg_pool2d(x, 1), lambda L, x: fn(L).adaptive_avg_pool2d(x, 3),
        lambda L, x: fn(L).adaptive_avg_pool2d(x[0], (1, 1)),
        lambda L, x: fn(L).adaptive_avg_pool1d(x[0], 1),
        lambda L, x: fn(L).adaptive_max_pool1d(x[0], 4),
        lambda L, x: fn(L).interpolate(x[0], scale_factor=2),
        lambda L, x: fn(L).interpolate(x, scale_factor=0.5, mode="area"),
        lambda L, x: fn(L).pad(x[0], (1, 1), mode="reflect"),
        lambda L, x: fn(L).pad(x[0], (1, 1, 1, 1), mode="replicate"),
        lambda L, x: fn(L).pad(x, (1, 1, 1, 1), mode="circular"),
        lambda L, x: fn(L).pad(x, (0, 0)),
        lambda L, x: fn(L).batch_norm(x, L.zeros(3, dtype=x.dtype), L.ones(3, dtype=x.dtype)),
        lambda L, x: fn(L).group_norm(x[:, :, 0, 0], 3),
        lambda L, x: fn(L).embedding(L.tensor(1), x[0, 0]),
    ]
    for call in calls:
        names = [type(call(L, L.tensor(img, requires_grad=True)).grad_fn).__name__
                 for L in (ember, torch)]
        assert names[0] == names[1]


def test_layer_integer_inputs(torch):
    """Integer max pooling, average pooling (truncating division) and padding as PyTorch."""
    x = np.random.default_rng(0).integers(-9, 9, (1, 2, 5, 6))
    calls = [lambda L, a: fn(L).max_pool2d(a, 2, padding=1, return_indices=True),
             lambda L, a: fn(L).avg_pool2d(a, 3, 2, 1, ceil_mode=True),
             lambda L, a: fn(L).pad(a, (1, 2), value=2.7),
             lambda L, a: fn(L).pad(a, (1, 2, 0, 3), mode="reflect"),
             lambda L, a: fn(L).pad(a, (1, 2, 0, 3), mode="circular")]
    for call in calls:
        e, t = (call(L, L.tensor(x)) for L in (ember, torch))
        for a, b in zip(*((r,) if not isinstance(r, tuple) else r for r in (e, t))):
            assert str(a.dtype) == str(b.dtype)
            np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode,shape", [("nearest", (1, 2, 5)), ("nearest", (1, 2, 5, 7)),
                                        ("nearest", (1, 1, 3, 5, 4)),
                                        ("nearest-exact", (1, 2, 5, 7)),
                                        ("linear", (1, 2, 5)), ("bilinear", (1, 2, 5, 7)),
                                        ("bicubic", (1, 2, 5, 7)),
                                        ("trilinear", (1, 1, 3, 5, 4))])
def test_interpolate_sizes(torch, mode, shape, dtype):
    """Up and down, by size and by (non-integer) scale, with and without align_corners.

    No size here is exactly twice the input by a scale other than 2 (see the next test)."""
    nd = len(shape) - 2
    options = [{"size": tuple(range(7, 7 + nd))}, {"size": 1}, {"scale_factor": 2.4},
               {"scale_factor": 0.45}, {"scale_factor": tuple(1.5 + k / 5 for k in range(nd))},
               {"scale_factor": 1.7, "recompute_scale_factor": True}]
    corners = [None] if mode.startswith("nearest") else [False, True]
    for kw in options:
        for ac in corners:
            compare(torch, lambda L, a: fn(L).interpolate(a, mode=mode, align_corners=ac, **kw),
                    [_rand(shape, 0)], dtype=dtype)


def _bn_steps(L, module, steps):
    """Train ``module`` for a few steps, then evaluate: outputs and the running statistics."""
    outs = []
    for k in range(steps):
        x = L.tensor(_rand((4, 3, 2, 5), k), dtype=L.float32)
        outs.append(module(x).detach().numpy())
    module.eval()
    outs.append(module(L.tensor(_rand((2, 3, 2, 5), 9), dtype=L.float32)).detach().numpy())
    return outs, module.running_mean.numpy(), module.running_var.numpy(), \
        int(module.num_batches_tracked)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_running_stats_over_steps(torch, momentum):
    """BatchNorm2d's running statistics follow PyTorch's step by step (momentum=None: the
    cumulative average over ``num_batches_tracked`` batches)."""
    results = [_bn_steps(L, L.nn.BatchNorm2d(3, momentum=momentum), 4) for L in (ember, torch)]
    (eo, em, ev, en), (to, tm, tv, tn) = results
    assert en == tn == 4
    np.testing.assert_allclose(em, tm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ev, tv, rtol=1e-5, atol=1e-6)
    for e, t in zip(eo, to):
        np.testing.assert_allclose(e, t, rtol=1e-4, atol=1e-5)


def test_batch_norm_functional_running_stats(torch):
    """``F.batch_norm`` updates the buffers in place without bumping their version."""
    stats = []
    for L in (ember, torch):
        rm, rv = L.zeros(3, dtype=L.float64), L.ones(3, dtype=L.float64)
        for k in range(3):
            fn(L).batch_norm(L.tensor(_rand((5, 3, 4), k)), rm, rv, training=True,
                             momentum=0.3)
        stats.append((rm.numpy().copy(), rv.numpy().copy(), rm._version, rv._version))
    np.testing.assert_allclose(stats[0][0], stats[1][0], rtol=1e-12)
    np.testing.assert_allclose(stats[0][1], stats[1][1], rtol=1e-12)
    assert stats[0][2:] == stats[1][2:]


@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_embedding_max_norm(torch, norm_type):
    """Rows looked up are renormalised in place first (the weight's version moves)."""
    w = _rand((5, 3), 0)
    idx = np.array([[0, 2, 2], [4, 0, 1]])
    results = []
    for L in (ember, torch):
        weight = L.tensor(w, requires_grad=True)
        out = fn(L).embedding(L.tensor(idx), weight, max_norm=1.5, norm_type=norm_type)
        out.sum().backward()
        results.append((out.detach().numpy(), weight.detach().numpy(), weight.grad.numpy(),
                        weight._version))
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, rtol=1e-6)
    module = ember.nn.Embedding(5, 3, max_norm=1.0)
    module(ember.tensor(idx))
    norms = np.linalg.norm(module.weight.detach().numpy()[np.unique(idx)], axis=1)
    assert (norms <= 1.0 + 1e-6).all()


def test_embedding_freq_double_backward_is_exact():
    """With ``scale_grad_by_freq`` the weight gradient divides each row by its index count;
    ember differentiates that exactly (PyTorch's double backward leaves the division out)."""
    idx = ember.tensor([[0, 1, 1, 2], [3, 3, 1, 0]])
    w = ember.tensor(_rand((4, 2), 0), requires_grad=True)

    def weight_grad(v):
        out = fn(ember).embedding(idx, w, padding_idx=2, scale_grad_by_freq=True)
        return ember.autograd.grad(out, w, v, create_graph=True)[0]
    v = ember.tensor(_rand((2, 4, 2), 1), requires_grad=True)
    assert gradcheck(weight_grad, [v])


def test_layer_modules(torch):
    """The new layers: same repr, same forward as PyTorch's."""
    x3, x4, x5 = _rand((2, 3, 7), 0), _rand((2, 3, 5, 6), 1), _rand((1, 2, 4, 5, 3), 2)
    cases = [
        (lambda nn: nn.MaxPool3d(2, stride=1, return_indices=True), x5),
        (lambda nn: nn.AvgPool3d(2, divisor_override=3), x5),
        (lambda nn: nn.AdaptiveAvgPool1d(3), x3),
        (lambda nn: nn.AdaptiveAvgPool3d((2, None, 1)), x5),
        (lambda nn: nn.AdaptiveMaxPool1d(3, return_indices=True), x3),
        (lambda nn: nn.AdaptiveMaxPool2d((2, 4)), x4), (lambda nn: nn.AdaptiveMaxPool3d(2), x5),
        (lambda nn: nn.BatchNorm3d(2, momentum=None), x5),
        (lambda nn: nn.Upsample(scale_factor=2), x4),
        (lambda nn: nn.Upsample(size=(3, 4), mode="bilinear", align_corners=True), x4),
        (lambda nn: nn.Upsample(scale_factor=(2, 1.5), mode="bicubic"), x4),
        (lambda nn: nn.UpsamplingNearest2d(scale_factor=2), x4),
        (lambda nn: nn.UpsamplingBilinear2d(size=4), x4),
    ]
    for make, x in cases:
        e, t = make(ember.nn), make(torch.nn)
        assert repr(e) == repr(t)
        compare(torch, lambda L, a: (e if L is ember else t)(a), [x])


def test_nearest_doubling_by_scale(torch):
    """1-d/3-d nearest with a scale factor giving exactly twice the size: values as PyTorch's
    (floor(i / scale)); the gradient is their exact transpose, where PyTorch's backward
    kernel halves the index instead (it disagrees with its own forward there)."""
    for shape, scale in [((1, 2, 5), 2.1), ((1, 1, 3, 5, 4), (2.1, 2.05, 2.2))]:
        compare(torch, lambda L, a: fn(L).interpolate(a, scale_factor=scale), [_rand(shape, 0)],
                grads=False)
        x = ember.tensor(_rand(shape, 1), requires_grad=True)
        assert gradcheck(lambda a: fn(ember).interpolate(a, scale_factor=scale), [x])


def test_irregular_map_transpose(torch):
    """A resize whose index pattern has no short period: its gradient takes the scatter path
    (``bincount``) instead of strided runs, and still matches PyTorch's."""
    from ember.ops.nn import resampling as nn_layers
    plan = nn_layers._upsample_plan("nearest", (42,), (189,), False, None, np.dtype("float64"))
    assert plan[0][1][0][3] is None  # no strided runs: the fallback is what runs below
    compare(torch, lambda L, a: fn(L).interpolate(a, size=189), [_rand((2, 3, 42), 0)],
            dtype="float64")
    compare(torch, lambda L, a: fn(L).interpolate(a, size=189, mode="linear"),
            [_rand((2, 3, 42), 1)], dtype="float64")


# --------------------------------------------------------------------------- bilinear


@pytest.mark.parametrize("shapes", [((4, 3), (4, 5)), ((3,), (5,)), ((2, 4, 3), (2, 4, 5))])
@pytest.mark.parametrize("with_bias", [False, True])
def test_bilinear(torch, shapes, with_bias):
    arrays = [_rand(s, k) for k, s in enumerate(shapes)] + [_rand((2, 3, 5), 7)]
    if with_bias:
        arrays.append(_rand((2,), 8))
    compare(torch, lambda L, *t: L.nn.functional.bilinear(*t), arrays)
    compare(torch, lambda L, *t: L.nn.functional.bilinear(*t), arrays, dtype="float64")


@pytest.mark.slow
def test_bilinear_gradcheck():
    ts = [ember.tensor(_rand(s, k), dtype=ember.float64, requires_grad=True)
          for k, s in enumerate([(3, 2), (3, 4), (2, 2, 4), (2,)])]
    f = ember.nn.functional.bilinear
    assert ember.autograd.gradcheck(f, ts)
    assert ember.autograd.gradgradcheck(f, ts)


@pytest.mark.parametrize("shapes", [((4, 3), (3, 5), (2, 3, 5)), ((4, 2), (4, 5), (2, 3, 5)),
                                    ((4, 3), (4, 4), (2, 3, 5)), ((4, 3), (4, 5), (2, 3, 5), (3,)),
                                    ((4, 3), (4, 1, 5), (2, 3, 5))])
def test_bilinear_errors(torch, shapes):
    got = []
    for L in (ember, torch):
        try:
            L.nn.functional.bilinear(*[L.zeros(*s) for s in shapes])
        except RuntimeError as e:
            got.append(str(e))
    assert len(got) == 2 and got[0] == got[1]


# --------------------------------------------------------------------------- activations


TOP_LEVEL = {  # torch.<name>: arguments after the input
    "relu": (), "selu": (), "celu": (0.7,), "threshold": (0.2, -3.0), "hardshrink": (0.3,),
    "rrelu": (0.1, 0.3),
}


@pytest.mark.parametrize("name,args", sorted(TOP_LEVEL.items()))
def test_top_level_activations_are_pytorchs(torch, name, args):
    compare(torch, lambda L, a: getattr(L, name)(a, *args), [_rand((2, 3), 0)], dtype="float64")
    grad_fns = [type(getattr(L, name)(L.ones(2, requires_grad=True), *args).grad_fn).__name__
                for L in (ember, torch)]
    assert grad_fns[0] == grad_fns[1]


def test_top_level_prelu_and_tensor_methods(torch):
    compare(torch, lambda L, a, w: L.prelu(a, w), [_rand((2, 3, 2), 0), _rand((3,), 1)])
    compare(torch, lambda L, a, w: a.prelu(w), [_rand((4,), 0), _rand((1,), 1)])
    compare(torch, lambda L, a: a.hardshrink(0.7) + a.hardshrink() + a.relu(),
            [_rand((2, 3), 2)])
    for name in ("relu", "relu_", "hardshrink", "prelu", "selu", "threshold", "rrelu"):
        assert hasattr(ember.Tensor, name) == hasattr(torch.Tensor, name), name


INPLACE = {  # in-place forms: (module, name, arguments after the input)
    "torch.relu_": ("", "relu_", ()), "torch.selu_": ("", "selu_", ()),
    "torch.celu_": ("", "celu_", (0.7,)), "torch.threshold_": ("", "threshold_", (0.2, 5.0)),
    "torch.rrelu_": ("", "rrelu_", ()), "Tensor.relu_": ("Tensor", "relu_", ()),
    "F.relu_": ("F", "relu_", ()), "F.elu_": ("F", "elu_", (0.5,)),
    "F.leaky_relu_": ("F", "leaky_relu_", (0.2,)), "F.hardtanh_": ("F", "hardtanh_", (-0.5, 1.0)),
    "F.selu_": ("F", "selu_", ()), "F.celu_": ("F", "celu_", ()),
    "F.threshold_": ("F", "threshold_", (0.2, 5.0)), "F.rrelu_": ("F", "rrelu_", (0.2, 0.4)),
    "F.relu6": ("F", "relu6", (True,)), "F.hardsigmoid": ("F", "hardsigmoid", (True,)),
    "F.hardswish": ("F", "hardswish", (True,)),
    "F.threshold": ("F", "threshold", (0.2, 5.0, True)),
}


def _inplace_fn(L, where, name):
    if where == "Tensor":
        return lambda x, *args: getattr(x, name)(*args)
    return getattr(fn(L) if where == "F" else L, name)


@pytest.mark.parametrize("key", sorted(INPLACE))
def test_inplace_forms_are_pytorchs(torch, key):
    """The result written into the input (its version counter bumped), PyTorch's node, the
    gradient of the original input, and PyTorch's error for a leaf that requires grad."""
    where, name, args = INPLACE[key]
    seen = []
    for L in (ember, torch):
        f = _inplace_fn(L, where, name)
        a = L.tensor([[-2.0, -0.5, 0.0], [0.1, 0.2, 3.0]], dtype=L.float64, requires_grad=True)
        b = a * 1
        version = b._version
        out = f(b, *args)
        assert out is b and b._version == version + 1
        b.backward(L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=L.float64))
        with pytest.raises(RuntimeError) as info:
            f(L.ones(2, requires_grad=True), *args)
        seen.append((b.detach().numpy(), a.grad.numpy(), type(b.grad_fn).__name__,
                     str(info.value)))
    (eb, eg, en, ee), (tb, tg, tn, te) = seen
    np.testing.assert_allclose(eb, tb, rtol=1e-12)
    np.testing.assert_allclose(eg, tg, rtol=1e-12)
    assert en == tn and ee == te


def test_inplace_negative_slopes_refuse_backward(torch):
    """In place, the elus and rrelu read their result: PyTorch's error for negative slopes."""
    cases = [("celu_", (-0.5,)), ("rrelu_", (-0.5, -0.2))]
    for name, args in cases:
        errors = []
        for L in (ember, torch):
            b = L.tensor([[1.0, -2.0]], requires_grad=True) * 1
            getattr(fn(L), name)(b, *args)
            with pytest.raises(RuntimeError) as info:
                b.sum().backward()
            errors.append(str(info.value))
        assert errors[0] == errors[1]


def test_rrelu_training_slopes(torch):
    """In training every non-positive element gets its own slope, uniform on [lower, upper]
    (ember's RNG: the draws are not PyTorch's); the gradient is that slope; a generator
    makes them reproducible; out of training the slope is (lower + upper) / 2."""
    x = ember.tensor(-np.linspace(0.1, 2.0, 4000), requires_grad=True)
    y = fn(ember).rrelu(x, 0.2, 0.6, training=True)
    slopes = (y / x).detach().numpy()
    assert 0.2 <= slopes.min() and slopes.max() <= 0.6
    assert abs(slopes.mean() - 0.4) < 0.01 and len(np.unique(slopes)) > 3900
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes, rtol=1e-12)
    draws = [ember.rrelu(x.detach(), 0.2, 0.6, True, ember.Generator().manual_seed(5))
             for _ in range(2)]
    np.testing.assert_array_equal(draws[0].numpy(), draws[1].numpy())
    for L in (ember, torch):
        out = fn(L).rrelu(L.tensor([-1.0, 2.0]), 0.2, 0.6)
        np.testing.assert_allclose(out.numpy(), [-0.4, 2.0], rtol=1e-7)


# At most 7 values each (PyTorch's scalar kernels: see _at; its vectorised softshrink gives +0.0
# where the scalar one keeps -0.0).
SPECIAL = ([-4.0, -3.0, -0.5, -0.0, 0.0, 0.5, 3.0], [-0.0, 6.0, 7.0, NAN, INF, -INF])


@pytest.mark.parametrize("name,args", [
    ("relu6", ()), ("selu", ()), ("celu", (0.5,)), ("hardsigmoid", ()), ("hardswish", ()),
    ("logsigmoid", ()), ("softshrink", ()), ("softsign", ()), ("tanhshrink", ()),
    ("threshold", (0.0, 9.0)), ("hardshrink", ()), ("rrelu", ()), ("elu", ()), ("hardtanh", ()),
    ("softplus", ())])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_values_print_like_pytorchs(torch, name, args, dtype):
    """Signed zeros, NaN and infinities, bit for bit (as printed)."""
    for values in SPECIAL:
        outs = [repr(getattr(fn(L), name)(L.tensor(values, dtype=getattr(L, dtype)), *args))
                for L in (ember, torch)]
        assert outs[0] == outs[1]


def test_integer_inputs(torch):
    """relu6 and threshold keep integer dtypes (threshold's numbers truncated); softsign and
    tanhshrink compute in the default float dtype."""
    i = [3, -2, 0, 7, 1]
    for f in (lambda L, x: fn(L).relu6(x), lambda L, x: fn(L).threshold(x, 1.5, 7.9),
              lambda L, x: fn(L).threshold(x, -0.5, -9.7), lambda L, x: fn(L).softsign(x),
              lambda L, x: fn(L).tanhshrink(x), lambda L, x: fn(L).hardtanh(x, -1.5, 1.5),
              lambda L, x: fn(L).relu6(x.to(L.uint8)), lambda L, x: L.relu(x)):
        outs = [repr(f(L, L.tensor(i))) for L in (ember, torch)]
        assert outs[0] == outs[1]


def _activation_error_cases(L):
    f = fn(L)
    i, b, x = L.tensor([1, -2]), L.tensor([True, False]), L.tensor([[1.0, -2.0, 0.5]])
    w = L.tensor([0.25])
    return {
        **{f"{name}_{kind}": (lambda name=name, t=t: getattr(f, name)(t))
           for name in ("selu", "celu", "hardsigmoid", "hardswish", "logsigmoid", "softshrink",
                        "hardshrink", "rrelu") for kind, t in (("int", i), ("bool", b))},
        "relu6_bool": lambda: f.relu6(b),
        "hardtanh_bool": lambda: f.hardtanh(b),
        "hardtanh_uint8_negative": lambda: f.hardtanh(L.tensor([1], dtype=L.uint8)),
        "threshold_bool": lambda: f.threshold(b, 0.0, 1.0),
        "softsign_bool": lambda: f.softsign(b),
        "softmin_int": lambda: f.softmin(i, 0),
        "softmin_bool": lambda: f.softmin(b, 0),
        "glu_int": lambda: f.glu(L.tensor([1, 2])),
        "glu_odd": lambda: f.glu(x),
        "glu_odd_int": lambda: f.glu(L.tensor([1, 2, 3])),
        "glu_odd_dim0": lambda: f.glu(L.ones(3, 2), 0),
        "glu_scalar": lambda: f.glu(L.tensor(1.0)),
        "glu_dim": lambda: f.glu(x, 2),
        "celu_zero_alpha": lambda: f.celu(x, 0.0),
        "celu_zero_alpha_int": lambda: f.celu(i, 0.0),
        "softshrink_negative": lambda: f.softshrink(x, -0.5),
        "softshrink_negative_double": lambda: f.softshrink(x.double(), -0.5),
        "softshrink_huge": lambda: f.softshrink(x, 1e39),
        "softshrink_negative_int": lambda: f.softshrink(i, -0.5),
        "rrelu_bounds": lambda: f.rrelu(x, 0.5, 0.2),
        "rrelu_bounds_training": lambda: f.rrelu(x, 0.5, 0.2, training=True),
        "rrelu_int_training": lambda: f.rrelu(i, training=True),
        "prelu_int": lambda: f.prelu(i, w),
        "prelu_int_int": lambda: f.prelu(i, L.tensor([1])),
        "prelu_double_float": lambda: f.prelu(x.double(), w),
        "prelu_channels": lambda: f.prelu(x, L.ones(2)),
        "prelu_1d_channels": lambda: f.prelu(x[0], L.ones(3)),
        "prelu_scalar_input": lambda: f.prelu(L.tensor(1.0), L.ones(3)),
        "prelu_2d_weight": lambda: f.prelu(x, L.ones(3, 1)),
        "torch_prelu_bool": lambda: L.prelu(b, w),
        "torch_hardshrink_int": lambda: L.hardshrink(i),
        "torch_selu_bool": lambda: L.selu(b),
        "torch_relu_bool": lambda: L.relu(b),
        "torch_threshold_bool": lambda: L.threshold(b, 0, 1),
    }


@pytest.mark.parametrize("name", sorted(_activation_error_cases(ember)))
def test_activation_errors_are_pytorchs(torch, name):
    errors = []
    for L in (ember, torch):
        with pytest.raises(Exception) as info:
            _activation_error_cases(L)[name]()
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]


def test_softmin_implicit_dim(torch):
    """PyTorch's deprecated implicit dim: 0 for 0, 1 and 3 dims, else 1 (with its warning)."""
    for shape in ((), (3,), (2, 3), (2, 3, 2), (2, 2, 3, 2)):
        x = _rand(shape, 3)
        outs = []
        for L in (ember, torch):
            with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
                outs.append(fn(L).softmin(L.tensor(x)).numpy())
        np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6)


# ----------------------------------------------------------------------- shuffle, fold, dropouts


MORE_LAYER_ERRORS = [
    lambda L: fn(L).pixel_shuffle(_x(L, 2, 3), 2),
    lambda L: fn(L).pixel_shuffle(_x(L, 1, 4, 2, 2), 0),
    lambda L: fn(L).pixel_shuffle(_x(L, 1, 3, 2, 2), 2),
    lambda L: fn(L).pixel_unshuffle(_x(L, 2, 3), 2),
    lambda L: fn(L).pixel_unshuffle(_x(L, 1, 3, 4, 4), -1),
    lambda L: fn(L).pixel_unshuffle(_x(L, 1, 3, 3, 2), 2),
    lambda L: fn(L).pixel_unshuffle(_x(L, 1, 3, 4, 3), 2),
    lambda L: fn(L).unfold(_x(L, 2, 3), 2),
    lambda L: fn(L).unfold(_x(L, 3), 2),
    lambda L: fn(L).unfold(_x(L, 1, 2, 3, 5), 4),
    lambda L: fn(L).unfold(_x(L, 1, 2, 3, 3), 0),
    lambda L: fn(L).unfold(_x(L, 1, 2, 3, 3), 2, stride=0),
    lambda L: fn(L).unfold(_x(L, 1, 2, 3, 3), 2, dilation=(1, 0)),
    lambda L: fn(L).unfold(_x(L, 1, 2, 3, 3), 2, padding=-1),
    lambda L: fn(L).unfold(_x(L, 1, 0, 3, 3), 2),
    lambda L: fn(L).unfold(_x(L, 1, 1, 2, 3, 3), 2),
    lambda L: fn(L).fold(_x(L, 1, 7, 4), (3, 3), 2),
    lambda L: fn(L).fold(_x(L, 1, 8, 5), (3, 3), 2),
    lambda L: fn(L).fold(_x(L, 8), (3, 3), 2),
    lambda L: fn(L).fold(_x(L, 1, 8, 4, 1), (3, 3), 2),
    lambda L: fn(L).fold(_x(L, 1, 8, 0), (3, 3), 2),
    lambda L: fn(L).fold(_x(L, 1, 8, 4), (3, 3), 2, stride=-1),
    lambda L: fn(L).fold(_x(L, 1, 8, 1), (1, 1), 3),
    lambda L: fn(L).dropout1d(_x(L, 2, 3, 4, 5)),
    lambda L: fn(L).dropout1d(_x(L, 3), 0.5),
    lambda L: fn(L).dropout2d(_x(L, 2, 3, 4, 5), 1.5),
    lambda L: fn(L).dropout3d(_x(L, 2, 3, 4, 5), -0.1),
    lambda L: fn(L).alpha_dropout(_x(L, 3), 2.0),
    lambda L: fn(L).feature_alpha_dropout(_x(L, 3), 0.5, True),
    lambda L: fn(L).alpha_dropout(L.ones(3, dtype=L.int64), 0.5, True),
    lambda L: fn(L).instance_norm(_x(L, 2, 3, 1)),
    lambda L: fn(L).instance_norm(_x(L, 3, 4)),
    lambda L: fn(L).instance_norm(_x(L, 2, 3, 4), _x(L, 4), _x(L, 4)),
    lambda L: fn(L).instance_norm(_x(L, 2, 3, 4), _x(L, 3), None, use_input_stats=False),
    lambda L: fn(L).instance_norm(_x(L, 2, 3, 4), weight=_x(L, 2)),
]


@pytest.mark.parametrize("case", range(len(MORE_LAYER_ERRORS)))
def test_more_layer_errors(torch, case):
    """Bad arguments raise PyTorch's exception type with PyTorch's message."""
    raised = []
    for L in (ember, torch):
        with pytest.raises(Exception) as info:
            MORE_LAYER_ERRORS[case](L)
        raised.append((type(info.value).__name__, str(info.value)))
    assert raised[0] == raised[1]


def test_fold_inverts_unfold_counts(torch):
    """fold(unfold(x)) multiplies each pixel by the number of blocks covering it."""
    x = _rand((2, 3, 5, 6), 1)
    outs = []
    for L in (ember, torch):
        t = L.tensor(x)
        kw = dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
        folded = fn(L).fold(fn(L).unfold(t, **kw), (5, 6), **kw)
        ones = fn(L).fold(fn(L).unfold(L.ones_like(t), **kw), (5, 6), **kw)
        outs.append((folded.numpy(), ones.numpy()))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-6)
    np.testing.assert_array_equal(outs[0][1], outs[1][1])
    np.testing.assert_allclose(outs[0][0], x * outs[0][1], rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fold_of_many_channels_into_a_small_image_matches_pytorch(torch, dtype):
    """col2im with the channels moved last for its adds (few blocks per row, many channels:
    ``conv._col2im_raw``), and its gradient (im2col), against PyTorch."""
    kw = dict(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 0), stride=2)
    cols = _rand((2, 300 * 6, 6), 3).astype(dtype)  # blocks (3, 2): 2 per row
    g = _rand((2, 300, 5, 6), 4).astype(dtype)
    outs = []
    for L in (ember, torch):
        t = L.tensor(cols, requires_grad=True)
        out = fn(L).fold(t, (5, 6), **kw)
        out.backward(L.tensor(g))
        outs.append((out.detach().numpy(), t.grad.numpy()))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(outs[0][1], outs[1][1])


def test_pixel_shuffle_round_trip_and_integers(torch):
    x = np.arange(2 * 8 * 2 * 3).reshape(2, 8, 2, 3)
    for L in (ember, torch):
        t = L.tensor(x)
        s = fn(L).pixel_shuffle(t, 2)
        assert s.dtype == L.int64 and tuple(s.shape) == (2, 2, 4, 6)
        np.testing.assert_array_equal(fn(L).pixel_unshuffle(s, 2).numpy(), x)
    np.testing.assert_array_equal(fn(ember).pixel_shuffle(ember.tensor(x), 2).numpy(),
                                  fn(torch).pixel_shuffle(torch.tensor(x), 2).numpy())
    raised = []
    for L in (ember, torch):  # PyTorch's im2col and col2im kernels are floating-point only
        for f in (lambda t: fn(L).unfold(t, 2),
                  lambda t: fn(L).fold(t[0].reshape(8, 6)[:, :4], 2, 1)):
            with pytest.raises(NotImplementedError) as info:
                f(L.tensor(x))
            raised.append(str(info.value))
    assert raised[:2] == raised[2:]


@pytest.mark.parametrize("p,keepdim", [(2.0, False), (1.0, True), (3.0, False),
                                       (float("inf"), False)])
def test_pairwise_distance(torch, p, keepdim):
    """Values and gradients as PyTorch, broadcasting and 1-d inputs too. (PyTorch's node is
    NormBackward1, from at::norm; ember's norm records LinalgVectorNormBackward0.)"""
    for shapes in (((4, 5), (4, 5)), ((4, 5), (1, 5)), ((5,), (3, 5)), ((6,), (6,))):
        arrays = [_rand(s, k) for k, s in enumerate(shapes)]
        compare(torch, lambda L, a, b: fn(L).pairwise_distance(a, b, p, keepdim=keepdim),
                arrays)
    a, b = (ember.tensor(_rand((3, 4), k), requires_grad=True) for k in (5, 6))
    assert gradcheck(lambda u, v: fn(ember).pairwise_distance(u, v, p, 1e-3), (a, b))


def test_instance_norm_running_stats_over_steps(torch):
    """The running stats take the mean of the per-sample updates, each step, as PyTorch."""
    stats = []
    for L in (ember, torch):
        rm, rv = L.zeros(3), L.ones(3)
        for step in range(3):
            x = L.tensor(_rand((4, 3, 5), step) * (step + 1) + step, dtype=L.float32)
            fn(L).instance_norm(x, rm, rv, momentum=0.2)
        stats.append((rm.numpy(), rv.numpy()))
    np.testing.assert_allclose(stats[0][0], stats[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stats[0][1], stats[1][1], rtol=1e-5, atol=1e-6)


def test_feature_dropout_masks_whole_channels():
    ember.manual_seed(0)
    for name, shape in (("dropout1d", (40, 50, 6)), ("dropout1d", (800, 6)),
                        ("dropout2d", (40, 50, 3, 2)), ("dropout3d", (40, 50, 2, 2, 2)),
                        ("dropout3d", (800, 2, 3, 2))):
        x = ember.ones(*shape)
        y = getattr(fn(ember), name)(x, 0.3).numpy()
        assert y.shape == shape
        per_channel = y.reshape(y.shape[0], y.shape[1], -1) if len(shape) > 3 - \
            (name == "dropout1d") else y.reshape(1, y.shape[0], -1)
        assert (per_channel == per_channel[..., :1]).all()  # one draw per channel
        assert set(np.unique(y).tolist()) <= {0.0, float(np.float32(1) / np.float32(0.7))}
        assert abs((y == 0).mean() - 0.3) < 0.05
        same = getattr(fn(ember), name)(x, 0.3, training=False)
        assert (same is x) == (len(shape) == 3 + (name != "dropout1d") + (name == "dropout3d"))
        assert same.shape == x.shape  # unbatched: a squeezed view of the unsqueezed input


def test_alpha_dropout_values_and_statistics():
    """Kept values ``a * x + alpha * a * p``, dropped ones ``-alpha * a * (1 - p)``; unit-normal
    inputs keep zero mean and unit variance."""
    ember.manual_seed(0)
    alpha, p = 1.7580993408473766, 0.2
    a = 1 / np.sqrt((alpha * alpha * p + 1) * (1 - p))
    x = ember.randn(200000)
    y = fn(ember).alpha_dropout(x, p, True).numpy()
    xs = x.numpy()
    dropped = np.isclose(y, -alpha * a * (1 - p), atol=1e-6)
    np.testing.assert_allclose(y[~dropped], a * xs[~dropped] + alpha * a * p, rtol=1e-5,
                               atol=1e-6)
    assert abs(dropped.mean() - p) < 0.01
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    assert fn(ember).alpha_dropout(x, p) is x  # training defaults to False
    f = fn(ember).feature_alpha_dropout(ember.randn(30, 40, 5), 0.5, True).numpy()
    low = np.isclose(f, -alpha * (1 / np.sqrt((alpha * alpha * 0.5 + 1) * 0.5)) * 0.5,
                     atol=1e-6)
    assert (low == low[..., :1]).all() and abs(low[..., 0].mean() - 0.5) < 0.06


def test_dropout_gradient_is_the_mask():
    """The input gradient of the sum is the multiplier each element got: per channel for the
    feature forms, ``1 / (1 - p)`` or 0 for dropout2d, ``a`` or 0 for the alpha forms."""
    ember.manual_seed(1)
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * 0.4 + 1) * 0.6)
    cases = ((lambda x: fn(ember).dropout2d(x, 0.4), 1 / 0.6, True),
             (lambda x: fn(ember).alpha_dropout(x, 0.4, True), a, False),
             (lambda x: fn(ember).feature_alpha_dropout(x, 0.4, True), a, True))
    for f, keep, per_channel in cases:
        x = ember.randn(6, 8, 3, 3, requires_grad=True)
        f(x).sum().backward()
        g = x.grad.numpy()
        assert np.all(np.isclose(g, 0) | np.isclose(g, keep, rtol=1e-6))
        assert 0.2 < np.isclose(g, 0).mean() < 0.6
        if per_channel:
            flat = g.reshape(6, 8, -1)
            assert (flat == flat[..., :1]).all()


def test_dropout_inplace_forms(torch):
    for L in (ember, torch):
        x = L.ones(4, 5, 3)
        assert fn(L).dropout1d(x, 0.5, inplace=True) is x
        assert fn(L).dropout2d(L.ones(2, 3, 2, 2), 0.5, inplace=True) is not None
        y = L.ones(5, 3)
        assert fn(L).dropout1d(y, 1.0, inplace=True).shape == (5, 3)
        assert float(y.abs().sum()) == 0.0
        z = L.ones(6, 4)
        out = fn(L).alpha_dropout(z, 0.5, True, inplace=True)
        assert out is z


@pytest.mark.parametrize("name,shape", [("dropout2d", (2, 3, 4)), ("dropout2d", (2, 3)),
                                        ("dropout2d", (1, 2, 3, 4, 5)), ("dropout3d", (2, 3)),
                                        ("dropout3d", (2, 3, 4, 5, 6, 7))])
def test_feature_dropout_rank_warnings(torch, name, shape):
    """PyTorch's deprecation warnings for unexpected ranks, word for word."""
    import warnings
    messages = []
    for L in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(fn(L), name)(L.ones(*shape), 0.5, training=False)
        messages.append([str(w.message) for w in caught])
    assert messages[0] == messages[1] and messages[0]
