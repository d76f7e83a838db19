"""Differentiable ops, one module per family; ``registry.py`` says how an op is declared.

Each op is declared once, with its derivative, forward mode, batching rule and public
function (``registry.py``'s header; ``docs/add_an_op.md``). What ``import ember`` exports, the
Tensor methods and their in-place forms, and the array-API spellings rules use under
``create_graph=True`` are read off those declarations (``_surface.py``):
``ember/_tensor_methods.py`` imports the families and binds the methods, ``_exports.py``
exports the functions.
An op that needs one of a family importing its own (``repeat_interleave`` needs indexing's
``index_select``; indexing imports ops/shape) calls it as a Tensor method
(``input.index_select(...)``, ``input[key]``): bound once every family is loaded, it needs no
import inside the function.
"""
