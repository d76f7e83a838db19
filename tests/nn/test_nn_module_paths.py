"""Every layer ember has is importable from the submodule of ``torch.nn.modules`` PyTorch
defines it in (programs import from those paths and name classes by them, e.g. in
``torch.serialization.safe_globals``); ``torch.nn.modules.utils``'s helpers against PyTorch's."""
import importlib
import pkgutil
from collections import OrderedDict

import pytest

import ember
import ember.nn


def _torch_submodules(torch):
    import torch.nn.modules as tm
    return [info.name for info in pkgutil.iter_modules(tm.__path__)]


def test_layers_at_pytorchs_module_paths(torch):
    checked = 0
    for sub in _torch_submodules(torch):
        tmod = importlib.import_module(f"torch.nn.modules.{sub}")
        names = [n for n in getattr(tmod, "__all__", []) if hasattr(ember.nn, n)]
        if not names:
            continue
        emod = importlib.import_module(f"ember.nn.modules.{sub}")
        for name in names:
            assert getattr(emod, name, None) is getattr(ember.nn, name), f"{sub}.{name}"
            checked += 1
    assert checked > 100
    # nn.modules.utils (PyTorch's layer helpers) does not shadow nn.utils (clip_grad_norm_...)
    assert ember.nn.utils.__name__ == "ember.nn.utils" and ember.nn.utils.clip_grad_norm_
    assert ember.nn.modules.utils.__name__ == "ember.nn.modules.utils"
    from ember.nn.modules.linear import NonDynamicallyQuantizableLinear
    assert type(ember.nn.MultiheadAttention(4, 2).out_proj) is NonDynamicallyQuantizableLinear


def test_utils_helpers_match_pytorch(torch):
    from torch.nn.modules import utils as tu

    from ember.nn.modules import utils as eu
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for x in (3, (1, 2), [4, 5, 6], ember.Size([2, 3]), "ab", range(3)):
            y = torch.Size(x) if isinstance(x, ember.Size) else x
            assert getattr(eu, name)(x) == getattr(tu, name)(y)
        assert getattr(eu, name).__name__ == getattr(tu, name).__name__
    assert eu._reverse_repeat_tuple((1, 2, 3), 2) == tu._reverse_repeat_tuple((1, 2, 3), 2)
    for out, shape in ((5, (2, 3, 4)), ((None, 2), (1, 3, 4)), ([3, None], (3, 4)),
                       ((None, None, 2), (2, 3))):
        try:
            expected = tu._list_with_default(out, shape)
        except ValueError as e:
            with pytest.raises(ValueError, match=str(e)):
                eu._list_with_default(out, shape)
        else:
            assert eu._list_with_default(out, shape) == expected

    def state(lib):
        sd = OrderedDict([("module.a", 1), ("module.b.c", 2), ("other", 3)])
        sd._metadata = OrderedDict([("", {"v": 1}), ("module", {"v": 2}),
                                    ("module.b", {"v": 3}), ("other", {"v": 4})])
        lib.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")
        return list(sd.items()), list(sd._metadata.items())
    assert state(ember) == state(torch)
