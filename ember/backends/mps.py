"""``torch.backends.mps``: Apple's Metal backend. ember has none: not built, not available."""

__all__ = ["is_available", "is_built"]


def is_built():
    return False


def is_available():
    return False
