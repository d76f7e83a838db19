"""Nested containers of tensors ("pytrees") as flat lists, as ``torch.utils._pytree`` does.

``tree_flatten(tree)`` gives the leaves in order and a ``TreeSpec`` that records the containers
around them; ``tree_unflatten(leaves, spec)`` rebuilds the same structure around new leaves. The
function transforms (``ember.func``) use them to take dicts of parameters or tuples of outputs
apart and put results back in the caller's shape. The containers are PyTorch's built-in ones:
tuple, list, dict, OrderedDict and namedtuple (matched by exact type, as in PyTorch);
anything else, None included, is a leaf. Specs print as PyTorch's do, since their repr is part
of PyTorch's error messages.
"""
from __future__ import annotations

from collections import OrderedDict

__all__ = ["TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves",
           "treespec_pprint"]


# Stands for every namedtuple class in a spec (PyTorch prints them as ``namedtuple``).
_NamedTuple = type("namedtuple", (), {})
_StructSeq = type("structseq", (), {})  # torch.return_types.X (built from one sequence)


def _node_type(tree):
    """The container kind of ``tree`` (None for a leaf)."""
    kind = type(tree)
    if kind in (tuple, list, dict, OrderedDict):
        return kind
    if isinstance(tree, tuple) and hasattr(kind, "_fields"):
        return _NamedTuple
    if isinstance(tree, tuple) and hasattr(kind, "n_sequence_fields"):
        return _StructSeq
    return None


def _children_and_context(tree, kind):
    if kind in (dict, OrderedDict):
        return list(tree.values()), list(tree.keys())
    return list(tree), (type(tree) if kind in (_NamedTuple, _StructSeq) else None)


def _rebuild(kind, context, children):
    if kind in (dict, OrderedDict):
        return kind(zip(context, children))
    if kind is _NamedTuple:
        return context(*children)
    if kind is _StructSeq:
        return context(children)
    return kind(children)


class TreeSpec:
    """The containers of a pytree: a type, its context (dict keys, namedtuple class) and one
    spec per child."""

    def __init__(self, type, context, children_specs):
        self.type = type
        self.context = context
        self.children_specs = children_specs
        self.num_leaves = sum(child.num_leaves for child in children_specs)

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and not isinstance(other, LeafSpec)
                and (self.type, self.context, self.children_specs)
                == (other.type, other.context, other.children_specs))

    def __hash__(self):
        return id(self)

    def __repr__(self, indent=0):
        indent += 2
        children = [child.__repr__(indent) for child in self.children_specs]
        return (f"TreeSpec({self.type.__name__}, {self.context}, ["
                + (",\n" + " " * indent).join(children) + "])")


class LeafSpec(TreeSpec):
    """The spec of one leaf, printed ``*``."""

    def __init__(self):
        super().__init__(None, None, [])
        self.num_leaves = 1

    def __eq__(self, other):
        return isinstance(other, LeafSpec)

    def __hash__(self):
        return 0

    def __repr__(self, indent=0):
        return "*"


_LEAF = LeafSpec()


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves of ``tree`` depth first, and its structure."""
    leaves = []
    return leaves, _flatten(tree, leaves)


# The recursions are module functions taking their accumulator, not closures: a nested
# function that calls itself is a reference cycle (function -> cell -> function) keeping the
# leaves alive until the garbage collector runs, which ``timeit`` turns off.
def _flatten(node, leaves):
    kind = _node_type(node)
    if kind is None:
        leaves.append(node)
        return _LEAF
    children, context = _children_and_context(node, kind)
    return TreeSpec(kind, context, [_flatten(child, leaves) for child in children])


def tree_unflatten(leaves, spec):
    """The structure ``spec`` describes, with ``leaves`` in place of the old ones."""
    return _build(spec, iter(leaves))


def _build(node, leaves):
    if isinstance(node, LeafSpec):
        return next(leaves)
    return _rebuild(node.type, node.context,
                    [_build(child, leaves) for child in node.children_specs])


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_map(fn, tree):
    """``tree`` with ``fn`` applied to each leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)


class _Asterisk:
    def __repr__(self):
        return "*"


def treespec_pprint(spec):
    """The structure written as Python with ``*`` for leaves: ``(*, {'a': *})``."""
    return repr(tree_unflatten([_Asterisk()] * spec.num_leaves, spec))
