"""``nn.utils.parametrize``, ``nn.utils.parametrizations``, the legacy ``weight_norm`` /
``spectral_norm`` hooks and ``nn.utils.prune``, run on ember and on PyTorch side by side.

Each scenario is a function of the library that records what it sees (values, gradients,
state_dict keys, class names, reprs, error types and texts) with ``rec``; the records must be
equal. Gradients are checked by finite differences in ``test_gradients_by_finite_differences``.
"""
import warnings

import numpy as np
import pytest

import ember


class Recorder(list):
    def __call__(self, *items):
        self.append(tuple(_plain(i) for i in items))


def _plain(x):
    if hasattr(x, "detach") and hasattr(x, "numpy"):
        return np.round(np.asarray(x.detach().numpy(), dtype=np.float64), 6).tolist()
    if isinstance(x, BaseException):
        return (type(x).__name__, str(x).replace("torch.nn.utils", "ember.nn.utils"))
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(i) for i in x)
    if hasattr(x, "_fields") or isinstance(x, (int, float, str, bool, type(None))):
        return x
    return str(x)


def compare(scenario, torch):
    got, want = Recorder(), Recorder()
    with warnings.catch_warnings():  # (the legacy weight_norm's deprecation: tested below)
        warnings.simplefilter("ignore")
        scenario(ember, got)
        scenario(torch, want)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"record {i}: ember {g!r} != torch {w!r}"


def lin(torch, i, o, seed=0):
    m = torch.nn.Linear(i, o).double()
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        m.weight.copy_(torch.tensor(rng.normal(size=(o, i))))
        m.bias.copy_(torch.tensor(rng.normal(size=(o,))))
    return m


def inputs(torch):
    return torch.tensor(np.random.default_rng(5).normal(size=(2, 3)))


def _modules(torch):
    nn = torch.nn

    class Sym(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    class Skew(nn.Module):
        def forward(self, X):
            A = X.triu(1)
            return A - A.T

        def right_inverse(self, A):
            return A.triu(1)

    class RankOne(nn.Module):
        def forward(self, x, y):
            return x.unsqueeze(-1) @ y.unsqueeze(-2)

        def right_inverse(self, Z):
            return Z[:, 0], Z[0, :]

    class Bad(nn.Module):
        def forward(self, X):
            return X[0]

    return Sym, Skew, RankOne, Bad


def parametrize_basics(torch, rec):
    import copy
    import pickle
    nn, P = torch.nn, torch.nn.utils.parametrize
    Sym, Skew, RankOne, Bad = _modules(torch)
    m = lin(torch, 3, 3)
    w0 = m.weight
    P.register_parametrization(m, "weight", Sym())
    rec(type(m).__name__, P.type_before_parametrizations(m).__name__, P.is_parametrized(m),
        P.is_parametrized(m, "bias"), repr(m))
    rec(list(m.state_dict().keys()), [n for n, _ in m.named_parameters()])
    rec(m.weight, m.parametrizations.weight.original is w0, type(m.weight.grad_fn).__name__)
    m(torch.ones(2, 3, dtype=torch.float64)).sum().backward()
    rec(m.parametrizations.weight.original.grad)
    with P.cached():
        rec("cached", m.weight is m.weight)
    rec("uncached", m.weight is m.weight)
    P.register_parametrization(m, "weight", Sym())
    rec(repr(m.parametrizations.weight))
    for bad in (lambda: setattr(m, "weight", torch.eye(3, dtype=torch.float64)),
                lambda: P.register_parametrization(nn.Linear(2, 2), "weight", Bad()),
                lambda: P.register_parametrization(m, "foo", Sym())):
        try:
            bad()
        except Exception as e:  # noqa: BLE001 - compared
            rec(e)
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    rec(type(m).__name__, m.weight, hasattr(m, "parametrizations"), m.weight is w0)
    m2 = lin(torch, 3, 3)
    P.register_parametrization(m2, "weight", Skew())
    with torch.no_grad():
        m2.weight = torch.tensor([[0., 1, 2], [-1, 0, 3], [-2, -3, 0]], dtype=torch.float64)
    rec(m2.weight, m2.parametrizations.weight.original)
    rec(type(copy.deepcopy(m2)).__name__)
    try:
        pickle.dumps(m2)
    except Exception as e:  # noqa: BLE001 - compared
        rec(type(e).__name__, str(e)[:60])
    P.remove_parametrizations(m2, "weight")
    rec(type(m2).__name__, m2.weight, type(m2.weight).__name__)
    try:
        P.remove_parametrizations(m2, "weight")
    except ValueError as e:
        rec(e)
    m3 = lin(torch, 2, 2)
    P.register_parametrization(m3, "weight", RankOne(), unsafe=True)
    rec(sorted(m3.state_dict().keys()), m3.weight)
    try:
        P.remove_parametrizations(m3, "weight", leave_parametrized=False)
    except ValueError as e:
        rec(e)
    P.remove_parametrizations(m3, "weight")
    rec(type(m3.weight).__name__, m3.weight.requires_grad, m3.weight)


def weight_norm_parametrization(torch, rec):
    PZ = torch.nn.utils.parametrizations
    x = inputs(torch)
    for dim in (0, 1, None, -1):
        m = PZ.weight_norm(lin(torch, 3, 4), dim=dim)
        rec(dim, list(m.state_dict().keys()), [tuple(v.shape) for v in m.state_dict().values()])
        m(x).sum().backward()
        pl = m.parametrizations.weight
        rec(m.weight, pl.original0.grad, pl.original1.grad)
    rec(repr(m))


def spectral_norm_parametrization(torch, rec):
    nn, PZ = torch.nn, torch.nn.utils.parametrizations
    x = inputs(torch)
    m = PZ.spectral_norm(lin(torch, 3, 4))
    rec(list(m.state_dict()), repr(m))
    p0 = m.parametrizations.weight[0]
    with torch.no_grad():
        p0._u.copy_(torch.tensor([0.5, 0.5, 0.5, 0.5], dtype=torch.float64))
        p0._v.copy_(torch.tensor([1., 0, 0], dtype=torch.float64))
    rec(m.weight, p0._u, p0._v)  # training: one power iteration per read
    m.eval()
    rec(m.weight, p0._u)  # eval: none
    m(x).sum().backward()
    rec(m.parametrizations.weight.original.grad)
    c = PZ.spectral_norm(nn.ConvTranspose2d(2, 3, 2).double())
    rec(c.parametrizations.weight[0].dim, tuple(c.parametrizations.weight[0]._u.shape))
    v = PZ.spectral_norm(lin(torch, 1, 3), name="bias")
    rec(v.bias / v.parametrizations.bias.original)
    for kw in ({"dim": 3}, {"n_power_iterations": 0}):
        try:
            PZ.spectral_norm(lin(torch, 3, 4), **kw)
        except Exception as e:  # noqa: BLE001 - compared
            rec(e)


def orthogonal_parametrization(torch, rec):
    nn, PZ = torch.nn, torch.nn.utils.parametrizations
    x = inputs(torch)
    for shape, mp in [((3, 3), None), ((4, 3), None), ((3, 5), None), ((3, 3), "cayley"),
                      ((4, 3), "cayley"), ((4, 3), "matrix_exp"), ((3, 4), "householder")]:
        m = lin(torch, shape[1], shape[0], seed=3)
        PZ.orthogonal(m, orthogonal_map=mp)
        orth = m.parametrizations.weight[0]
        rec(shape, mp, str(orth.orthogonal_map), list(m.state_dict().keys()), m.weight)
        w = m.weight
        q = w if shape[0] >= shape[1] else w.T
        rec(torch.dist(q.T @ q, torch.eye(q.shape[1], dtype=torch.float64)).item() < 1e-12)
        if shape[0] == shape[1]:  # (a non-square base has random extra columns)
            (m(x[:, :shape[1]]) ** 2).sum().backward()
            rec(m.parametrizations.weight.original.grad)
    rec(repr(m))
    for bad in (lambda: PZ.orthogonal(nn.Linear(2, 2), orthogonal_map="foo"),
                lambda: PZ.orthogonal(nn.Conv1d(2, 2, 1), name="bias"),
                lambda: PZ.orthogonal(nn.Linear(2, 2), name="nope")):
        try:
            bad()
        except Exception as e:  # noqa: BLE001 - compared
            rec(type(e).__name__, str(e)[:60])
    m = PZ.orthogonal(lin(torch, 3, 3))
    with torch.no_grad():
        m.weight = torch.eye(3, dtype=torch.float64)[[1, 0, 2]]
    rec(m.weight)
    m = PZ.orthogonal(lin(torch, 3, 3), orthogonal_map="cayley", use_trivialization=False)
    rec(m.weight, list(m.state_dict()))


def legacy_hooks(torch, rec):
    nn = torch.nn
    x = inputs(torch)
    m = nn.utils.weight_norm(lin(torch, 3, 4), dim=None)
    rec(list(m.state_dict()), tuple(m.weight_g.shape))
    m(x).sum().backward()
    rec(m.weight_g.grad, m.weight_v.grad)
    for bad in (lambda: nn.utils.weight_norm(m), lambda: nn.utils.remove_weight_norm(
            nn.utils.remove_weight_norm(m))):
        try:
            bad()
        except Exception as e:  # noqa: BLE001 - compared
            rec(e)
    rec(list(m.state_dict()), type(m.weight).__name__, m.weight)
    m = nn.utils.weight_norm(lin(torch, 3, 4))
    rec(m.weight_g.shape, m(x))
    s = nn.utils.spectral_norm(lin(torch, 3, 4))
    rec(list(s.state_dict()), type(s.weight).__name__, s.weight.grad_fn)
    with torch.no_grad():
        s.weight_u.copy_(torch.tensor([0.5, 0.5, 0.5, 0.5], dtype=torch.float64))
        s.weight_v.copy_(torch.tensor([1., 0, 0], dtype=torch.float64))
    s(x).sum().backward()
    rec(s.weight, s.weight_u, s.weight_v, s.weight_orig.grad)
    s.eval()
    s(x)
    rec(s.weight_u)
    for bad in (lambda: nn.utils.spectral_norm(s), lambda: nn.utils.remove_spectral_norm(
            nn.utils.remove_spectral_norm(s))):
        try:
            bad()
        except Exception as e:  # noqa: BLE001 - compared
            rec(e)
    rec(list(s.state_dict()), type(s.weight).__name__, s.weight)
    c = nn.utils.spectral_norm(nn.ConvTranspose1d(2, 3, 2))
    rec(tuple(c.weight_u.shape), tuple(c.weight_v.shape))


def pruning(torch, rec):
    prune = torch.nn.utils.prune
    x = inputs(torch)
    m = lin(torch, 3, 4)
    prune.l1_unstructured(m, "weight", 0.5)
    rec(list(m.state_dict()), [n for n, _ in m.named_parameters()],
        [n for n, _ in m.named_buffers()], m.weight_mask, type(m.weight.grad_fn).__name__)
    m(x).sum().backward()
    rec(m.weight_orig.grad)
    prune.ln_structured(m, "weight", 1, n=2, dim=0)
    rec(m.weight_mask)
    prune.l1_unstructured(m, "weight", 2)
    rec(m.weight_mask)
    prune.ln_structured(m, "weight", 0.34, n=1, dim=1)
    rec(m.weight_mask, prune.is_pruned(m), repr(m))
    prune.remove(m, "weight")
    rec(list(m.state_dict()), type(m.weight).__name__, m.weight, prune.is_pruned(m))
    for bad in (lambda: prune.remove(m, "weight"),
                *(lambda a=a: prune.l1_unstructured(lin(torch, 3, 4), "weight", a)
                  for a in (-1, 1.5, "x", 20)),
                lambda: prune.ln_structured(lin(torch, 3, 4), "bias", 1, n=1, dim=0),
                lambda: prune.ln_structured(lin(torch, 3, 4), "weight", 1, n=1, dim=2)):
        try:
            bad()
        except Exception as e:  # noqa: BLE001 - compared
            rec(e)
    rec(list(m.state_dict()))  # a failed pruning leaves the module as it was
    a, b = lin(torch, 3, 4, 1), lin(torch, 4, 2, 2)
    prune.global_unstructured([(a, "weight"), (b, "weight"), (a, "bias")],
                              prune.L1Unstructured, amount=0.4)
    rec(a.weight_mask, b.weight_mask, a.bias_mask)
    try:
        prune.global_unstructured([(a, "weight")], prune.RandomStructured, amount=1)
    except TypeError as e:
        rec(str(e).split("Found")[0])
    m = lin(torch, 3, 4)
    prune.random_unstructured(m, "weight", 5)
    rec(int(m.weight_mask.sum()))
    m = lin(torch, 3, 4)
    prune.random_structured(m, "weight", 2, dim=0)
    rec(int(m.weight_mask.sum()), sorted(m.weight_mask.sum(1).tolist()))
    m = lin(torch, 3, 4)
    prune.custom_from_mask(m, "bias", torch.tensor([1., 0, 1, 0], dtype=torch.float64))
    rec(m.bias)
    m = lin(torch, 3, 4)
    prune.l1_unstructured(m, "weight", 3, importance_scores=torch.arange(12.).reshape(4, 3))
    prune.identity(m, "bias")
    rec(m.weight_mask, m.bias_mask)
    rec(prune.L1Unstructured(0.5).prune(torch.tensor([1., -3, 2, 0.5])))


def transfer(torch, rec):
    P = torch.nn.utils.parametrize
    Sym = _modules(torch)[0]
    a = lin(torch, 3, 3)
    P.register_parametrization(a, "weight", Sym())
    b = lin(torch, 3, 3, seed=1)
    P.transfer_parametrizations_and_params(a, b)
    rec(type(b).__name__, list(b.state_dict()), b.weight, b.parametrizations.weight.original)
    c = torch.nn.Module()
    P.transfer_parametrizations_and_params(a, c, "weight")
    rec(type(c).__name__, list(c.state_dict()), c.weight)


def hook_dicts(torch, rec):
    """The hooks as PyTorch keeps them: code (the pruning tutorial, hand-written
    remove_weight_norm loops) walks ``_forward_pre_hooks`` for the hook objects."""
    prune = torch.nn.utils.prune
    m = lin(torch, 3, 4)
    prune.l1_unstructured(m, "weight", 3)
    torch.nn.utils.weight_norm(m, "bias", dim=0)
    rec([(type(h).__name__, getattr(h, "_tensor_name", getattr(h, "name", None)))
         for h in m._forward_pre_hooks.values()])
    hook, = [h for h in m._forward_pre_hooks.values() if isinstance(h, prune.BasePruningMethod)]
    rec(hook._tensor_name, prune.is_pruned(m))
    torch.nn.utils.remove_weight_norm(m, "bias")
    prune.remove(m, "weight")
    rec(len(m._forward_pre_hooks), prune.is_pruned(m))
    seen = []
    pre = m.register_forward_pre_hook(lambda mod, args, kwargs: seen.append(sorted(kwargs)),
                                      with_kwargs=True)
    post = m.register_forward_hook(lambda mod, args, out: seen.append(tuple(out.shape)))
    post_kw = m.register_forward_hook(lambda mod, args, kwargs, out: seen.append("kw"),
                                      with_kwargs=True, prepend=True)
    m(input=torch.ones(2, 3, dtype=torch.float64))
    rec(seen, list(m._forward_pre_hooks_with_kwargs.values()),
        len(m._forward_hooks), len(m._forward_hooks_with_kwargs))
    for handle in (pre, post, post_kw):
        handle.remove()
    rec(len(m._forward_pre_hooks), len(m._forward_pre_hooks_with_kwargs),
        len(m._forward_hooks), len(m._forward_hooks_with_kwargs))


SCENARIOS = [transfer, parametrize_basics, weight_norm_parametrization,
             spectral_norm_parametrization, orthogonal_parametrization, legacy_hooks, pruning,
             hook_dicts]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_same_as_pytorch(torch, scenario):
    import torch.nn.utils.prune  # noqa: F401 (PyTorch does not import it with nn.utils)
    compare(scenario, torch)


def test_legacy_weight_norm_warns():
    with pytest.warns(FutureWarning, match="torch.nn.utils.weight_norm` is deprecated"):
        ember.nn.utils.weight_norm(ember.nn.Linear(2, 2))


def _fd_check(module, x, params):
    """d(sum(module(x)**2))/d(param) by autograd equals central differences (float64)."""
    def loss():
        return float((module(x) ** 2).sum())
    (module(x) ** 2).sum().backward()
    for p in params:
        got = p.grad.numpy().copy()
        want = np.zeros_like(got)
        flat = p.data.numpy().reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + 1e-6
            up = loss()
            flat[i] = old - 1e-6
            down = loss()
            flat[i] = old
            want.reshape(-1)[i] = (up - down) / 2e-6
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kind", ["weight_norm", "spectral_norm_eval", "orthogonal_exp",
                                  "orthogonal_cayley", "orthogonal_householder",
                                  "legacy_weight_norm", "legacy_spectral_norm_eval", "prune"])
def test_gradients_by_finite_differences(kind):
    PZ, nn = ember.nn.utils.parametrizations, ember.nn
    x = inputs(ember)
    m = lin(ember, 3, 4 if kind != "orthogonal_exp" else 3)
    if kind == "weight_norm":
        PZ.weight_norm(m)
        params = [m.parametrizations.weight.original0, m.parametrizations.weight.original1]
    elif kind == "spectral_norm_eval":
        PZ.spectral_norm(m).eval()
        params = [m.parametrizations.weight.original]
    elif kind.startswith("orthogonal"):
        PZ.orthogonal(m, orthogonal_map=kind.split("_")[1].replace("exp", "matrix_exp"))
        with ember.no_grad():  # a point away from the base, where all entries matter
            m.parametrizations.weight.original.add_(
                ember.tensor(np.random.default_rng(1).normal(size=m.weight.shape)) * 0.3)
        params = [m.parametrizations.weight.original]
    elif kind == "legacy_weight_norm":
        nn.utils.weight_norm(m, dim=1)
        params = [m.weight_g, m.weight_v]
    elif kind == "legacy_spectral_norm_eval":
        nn.utils.spectral_norm(m).eval()
        params = [m.weight_orig]
    else:
        ember.nn.utils.prune.l1_unstructured(m, "weight", 5)
        params = [m.weight_orig]
    _fd_check(m, x, params)


def test_memory_format_conversion_and_skip_init(torch):
    def run(lib):
        c = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 3), lib.nn.Conv3d(1, 1, 1),
                              lib.nn.ConvTranspose2d(2, 2, 2))
        w = c[0].weight
        r = lib.nn.utils.convert_conv2d_weight_memory_format(c, lib.channels_last)
        out = [r is c, c[0].weight is w, c[0].weight.stride(), c[2].weight.stride(),
               c[1].weight.stride()]
        lib.nn.utils.convert_conv3d_weight_memory_format(c, lib.channels_last_3d)
        out.append(c[1].weight.stride())
        m = lib.nn.utils.skip_init(lib.nn.Linear, 2, 3)
        out += [repr(m), tuple(m.weight.shape)]
        for bad in (int, lib.nn.Module):
            try:
                lib.nn.utils.skip_init(bad)
            except RuntimeError as e:
                out.append(str(e).replace("ember", "torch"))
        return out
    assert run(ember) == run(torch)
