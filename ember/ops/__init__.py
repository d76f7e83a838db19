"""Differentiable ops, one module per family; ``registry.py`` says how an op is declared.

Each family module declares its public surface:

- ``__all__``: functions exported as ``ember.<name>``;
- ``METHODS``: ``{name: function}`` bound as ``Tensor.<name>``;
- ``INPLACE``: names of ``METHODS`` that also get an in-place ``Tensor.<name>_``;
- ``ARRAY_API`` (optional): array-API spellings (``axis``, ``keepdims``) for the Tensor
  namespace that derivative rules use under ``create_graph=True``.

The families are listed in ``ember/_tensor_methods.py`` (``FAMILIES``), which binds them.
"""
