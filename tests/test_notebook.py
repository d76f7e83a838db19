"""examples/backward_explained.ipynb runs top to bottom, so it never goes stale."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "examples" / "backward_explained.ipynb"


@pytest.mark.slow
def test_backward_explained_notebook_executes():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # Run from the repository root, so the kernel imports this checkout's ember.
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    pictures = [o for o in outputs if "image/svg+xml" in o.get("data", {})]
    assert len(pictures) >= 5  # the graphs show inline through _repr_svg_
    text = "".join(o.get("text", "") for o in outputs)
    assert "x.grad = tensor([ 4., 23.])" in text  # the tutorial's J^T v, explained
