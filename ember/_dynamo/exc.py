"""``torch._dynamo.exc``: the errors of ``torch.compile``."""

__all__ = ["TorchDynamoException", "InvalidBackend", "Unsupported"]


class TorchDynamoException(RuntimeError):
    pass


class InvalidBackend(TorchDynamoException):
    """``torch.compile`` was given a backend name it does not know."""

    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for "
                         "available backends.")


class Unsupported(TorchDynamoException):
    """``fullgraph=True`` and the call cannot be compiled whole (a graph break)."""
