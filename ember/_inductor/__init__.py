"""``torch._inductor``: PyTorch's compiler back end. ember has no compiler yet (its
``torch.compile`` runs eagerly); ``config`` is here so scripts that tune it run unchanged."""
from . import config

__all__ = ["config"]
