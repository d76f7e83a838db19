"""``torch.optim.swa_utils``: weight averaging over training (SWA and EMA models), the SWA
learning-rate schedule, and re-estimating batch-norm statistics of an averaged model.

Example (an EMA of the weights, as torchvision's reference scripts keep):
    >>> ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
    >>> for x, y in loader:
    ...     loss_fn(model(x), y).backward(); opt.step(); opt.zero_grad()
    ...     ema.update_parameters(model)
"""
from __future__ import annotations

import copy
import itertools
import math

from .._creation import tensor
from .._dtypes import int64
from ..autograd.grad_mode import no_grad
from ..nn.module import Module
from ..nn.modules.batchnorm import _BatchNorm
from ._lr_core import LRScheduler

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place update of a list of averaged tensors towards the model's:
    ``ema = decay * ema + (1 - decay) * current`` (a ``lerp_`` by ``1 - decay`` for floating
    tensors, as in PyTorch)."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
            for ema, current in zip(ema_param_list, current_param_list):
                ema.lerp_(current, 1 - decay)
        else:
            for ema, current in zip(ema_param_list, current_param_list):
                ema.copy_(ema * decay + current * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running mean of a list of tensors: after ``n`` models averaged,
    ``avg += (current - avg) / (n + 1)``."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if averaged_param_list[0].is_floating_point() or averaged_param_list[0].is_complex():
            weight = 1 / (num_averaged + 1)
            weight = weight.item() if hasattr(weight, "item") else weight
            for avg, current in zip(averaged_param_list, current_param_list):
                avg.lerp_(current, weight)
        else:
            for avg, current in zip(averaged_param_list, current_param_list):
                diff = current - avg
                if hasattr(num_averaged, "item"):
                    avg.addcdiv_(diff, num_averaged + 1)
                else:
                    avg.add_(diff, alpha=1.0 / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """``avg_fn`` form of the EMA: returns the new average of one tensor."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """``avg_fn`` form of the running mean: returns the new average of one tensor."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` whose parameters are a running average of ``model``'s over
    the calls to ``update_parameters(model)``.

    The first call copies ``model``'s parameters; later calls average with ``multi_avg_fn``
    (in place, on lists of tensors) or ``avg_fn`` (one tensor at a time, returning the new
    value), by default the equal-weight running mean (SWA). ``n_averaged`` (a long buffer)
    counts the calls. With ``use_buffers=True`` buffers are averaged too; otherwise they are
    copied from ``model`` on each call. Calling the averaged model runs its copy.

    Args:
        model: the module to average.
        device: where to keep the copy.
        avg_fn: ``avg_fn(averaged, current, n_averaged) -> new averaged``.
        multi_avg_fn: ``multi_avg_fn(averaged_list, current_list, n_averaged)``, in place.
        use_buffers: average the buffers as well as the parameters.
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into the
        average."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        averaged, current = [], []
        first = self.n_averaged.item() == 0
        for p_avg, p_model in zip(mine, theirs):
            p_model = p_model.detach().to(p_avg.device)
            averaged.append(p_avg.detach())
            current.append(p_model)
            if first:
                p_avg.detach().copy_(p_model)
        if not first:
            # As PyTorch: a multi_avg_fn gets the tensors in lists (grouped by device and
            # dtype); the default running mean is the list form (lerp) on GPUs but the
            # one-tensor form on the CPU, and the two round differently.
            for avgs, currents in _by_device_and_dtype(averaged, current):
                n = self.n_averaged.to(avgs[0].device)
                on_cpu = avgs[0].device.type == "cpu"
                if self.multi_avg_fn is not None or (self.avg_fn is None and not on_cpu):
                    (self.multi_avg_fn or get_swa_multi_avg_fn())(avgs, currents, n)
                    continue
                avg_fn = self.avg_fn or get_swa_avg_fn()
                for p_avg, p_model in zip(avgs, currents):
                    p_avg.copy_(avg_fn(p_avg, p_model, n))
        if not self.use_buffers:
            for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                b_avg.detach().copy_(b_model.detach().to(b_avg.device))
        with no_grad():
            self.n_averaged += 1


def _by_device_and_dtype(averaged, current):
    """The (averaged, current) pairs grouped as PyTorch groups them for its list kernels."""
    groups = {}
    for a, c in zip(averaged, current):
        lists = groups.setdefault((str(a.device), a.dtype), ([], []))
        lists[0].append(a)
        lists[1].append(c)
    return list(groups.values())


def update_bn(loader, model, device=None):
    """Recompute the running statistics of every batch norm in ``model`` with one pass over
    ``loader`` (a cumulative average: momentum ``None``), in training mode; the mode and the
    momenta are restored afterwards. A batch that is a list or tuple is fed by its first
    element."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate from its current value to ``swa_lr`` over
    ``anneal_epochs`` steps (``"cos"`` or ``"linear"``), then holds it at ``swa_lr``.

    Args:
        optimizer: the optimizer whose learning rates to set.
        swa_lr: the final learning rate, one for all groups or a list with one per group.
        anneal_epochs: steps the annealing takes (0: jump straight to ``swa_lr``).
        anneal_strategy: ``"cos"`` or ``"linear"``.
        last_epoch: the index of the last epoch, for resuming.
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        groups = optimizer.param_groups
        if isinstance(swa_lr, (list, tuple)):
            if len(swa_lr) != len(groups):
                raise ValueError(f"swa_lr must have the same length as optimizer.param_groups. "
                                 f"swa_lr has {len(swa_lr)} values, param_groups has "
                                 f"{len(groups)}.")
            swa_lrs = list(swa_lr)
        else:
            swa_lrs = [swa_lr] * len(groups)
        for lr, group in zip(swa_lrs, groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """The learning rate the annealing started from, given the current one at ``alpha``
        (the schedule is chainable: each step works from the group's current ``lr``)."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _fraction(self, step):
        return self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))

    def get_lr(self):
        self._warn_get_lr()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self._fraction(step - 1)
        alpha = self._fraction(step)
        out = []
        for group in self.optimizer.param_groups:
            start = self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
            out.append(group["swa_lr"] * alpha + start * (1 - alpha))
        return out

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        """The scheduler's state, without the optimizer and the annealing function."""
        return {key: value for key, value in self.__dict__.items()
                if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
