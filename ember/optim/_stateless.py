"""``torch.optim.swap_in_optimizer_params_and_state``: run an optimizer on other tensors."""
from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .._tensor import Tensor

if TYPE_CHECKING:
    from .optimizer import Optimizer

__all__ = ["swap_in_optimizer_params_and_state"]

_WHO = "swap_in_optimizer_params_and_state"


def _check_groups(optimizer, state, groups):
    if not isinstance(state, dict):
        raise RuntimeError(f"{_WHO} requires swapin_optim_state['state'] to be a dict mapping "
                           "packed parameter ids to per-param state dicts, got "
                           f"{type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_WHO} requires optimizer.state_dict()-style state keyed by "
                           "packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_WHO} requires per-parameter optimizer state entries to be "
                           "dictionaries.")
    if not isinstance(groups, list):
        raise RuntimeError(f"{_WHO} requires swapin_optim_state['param_groups'] to be a list "
                           f"of param-group dicts, got {type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups "
                           "than the live optimizer.")


def _group_ids(idx, live, swapin):
    if not isinstance(swapin, dict):
        raise RuntimeError(f"{_WHO} requires each optimizer param group to be a dictionary.")
    ids = swapin.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(f"{_WHO} requires optimizer.state_dict()-style "
                           "param_groups[*]['params'] entries keyed by packed parameter ids.")
    if len(live["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of "
                           "params than the live optimizer param group.")
    swapin_only = [k for k in swapin if k not in live]
    live_only = [k for k in live if k not in swapin]
    if swapin_only or live_only:
        raise RuntimeError(f"{_WHO} requires optimizer.state_dict()-style param group keys to "
                           "exactly match the live optimizer group keys for group "
                           f"{idx}. Keys only in swap-in: {swapin_only}. Keys only in live: "
                           f"{live_only}.")
    return ids


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer: Optimizer,
                                       swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]) -> Iterator[None]:
    """Within the ``with`` block, ``optimizer`` works on ``swapin_parameters`` (in its
    parameters' order) with the state and hyperparameters of ``swapin_optim_state`` (a
    ``state_dict()``-shaped dict); on exit its own parameters, groups and state are back.
    In-place edits of the swapped-in state tensors stay in ``swapin_optim_state``."""
    if not optimizer.state:
        raise RuntimeError(f"{_WHO} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_WHO} requires a DCP-style optimizer state_dict.")
    state: Any = swapin_optim_state.get("state")  # (checked by _check_groups)
    groups: Any = swapin_optim_state.get("param_groups")
    _check_groups(optimizer, state, groups)
    flat = list(swapin_parameters.values())
    plans, offset, seen = [], 0, set()
    for idx, (live, swapin) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _group_ids(idx, live, swapin)
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(f"{_WHO} requires the explicit parameter state to match "
                               "optimizer.param_groups ordering.")
        plans.append((live, swapin, ids, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_WHO} requires swapin_optim_state['state'] to be keyed only by "
                           f"packed parameter ids from param_groups[*]['params']; got extra "
                           f"keys {extra!r}.")
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped: defaultdict = defaultdict(dict)
        for live, swapin, ids, params in plans:
            live["params"] = params
            live.update({k: v for k, v in swapin.items() if k != "params"})
            for p, i in zip(params, ids):
                swapped[p] = dict(state.get(i, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
