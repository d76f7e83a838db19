"""Regenerate the README's picture of a backward graph: ``python docs/make_pictures.py``.

The picture is drawn by ember's own code (``ember.viz``); ``tests/viz/test_viz.py`` checks that
the committed file is what this script makes now.
"""
from pathlib import Path

import ember as torch
from ember import nn, viz

PICTURE = Path(__file__).with_name("backward_graph.svg")


def readme_graph():
    """The backward graph of a two-layer network's cross-entropy loss."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    loss = nn.functional.cross_entropy(model(torch.randn(5, 4)), torch.tensor([0, 2, 1, 0, 2]))
    return viz.graph(loss, params=model.named_parameters())


if __name__ == "__main__":
    print(readme_graph().save(PICTURE))
