"""Graphs from the seed tutorials, built the same way by several test modules."""


def seed_vjp(lib):
    """The seeds' vector-Jacobian example: y = [x1², x1² + 5x2², 3x2] at x = [1, 2], written
    element by element (in place)."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = lib.empty(3)
    y[0] = x[0] ** 2
    y[1] = x[0] ** 2 + 5 * x[1] ** 2
    y[2] = 3 * x[1]
    return x, y
