"""Differentiable ops, one module per family; ``registry.py`` says how an op is declared.

Each family module declares its public surface:

- ``__all__``: functions exported as ``ember.<name>``;
- ``METHODS``: ``{name: function}`` bound as ``Tensor.<name>``;
- ``INPLACE``: names of ``METHODS`` that also get an in-place ``Tensor.<name>_``;
- ``ARRAY_API`` (optional): array-API spellings (``axis``, ``keepdims``) for the Tensor
  namespace that derivative rules use under ``create_graph=True``.

The families are listed in ``ember/_tensor_methods.py`` (``FAMILIES``), which binds them.
An op that needs one of a family importing its own (``repeat_interleave`` needs indexing's
``index_select``; indexing imports ops/shape) calls it as a Tensor method
(``input.index_select(...)``, ``input[key]``): bound once every family is loaded, it needs no
import inside the function.
"""
