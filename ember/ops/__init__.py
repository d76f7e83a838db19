"""Differentiable ops, one module per family; see registry.py for how an op is declared."""
