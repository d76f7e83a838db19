"""``torch.utils.hooks``: the handle that ``register_*_hook`` methods return."""
from __future__ import annotations

import weakref
from collections import OrderedDict

__all__ = ["RemovableHandle", "unserializable_hook"]


class RemovableHandle:
    """Removes one hook from the dict it was registered in: ``handle.remove()``, or leave a
    ``with handle:`` block.

    The hook is stored under ``handle.id`` (unique in the process) in ``hooks_dict``, and in
    each of ``extra_dict`` (one dict or a list of them) where it is present. The handle holds
    the dicts weakly (so they must be weak-referenceable, e.g. ``OrderedDict``s, as in
    PyTorch): a handle outliving its module removes nothing.
    """

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        extras = [extra_dict] if isinstance(extra_dict, dict) else (extra_dict or [])
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self):
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __getstate__(self):  # weak references do not pickle: keep the dicts themselves
        return self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref)

    def __setstate__(self, state):
        hooks_dict, self.id = state[0], state[1]
        self.hooks_dict_ref = weakref.ref(OrderedDict() if hooks_dict is None else hooks_dict)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in (state[2] if len(state) > 2 else ())
                                    if d is not None)
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.remove()


def unserializable_hook(f):
    """Mark ``f`` as a hook that is not expected to survive serialization (PyTorch warns about
    unmarked tensor hooks when it pickles a tensor; ember keeps no such check)."""
    f.__torch_unserializable__ = True
    return f
