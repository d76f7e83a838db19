"""``torch.onnx``: exporting models to ONNX files.

ember has no exporter: ONNX export needs a traced graph of ATen operators, which ember does not
produce. ``export`` raises NotImplementedError saying so; ``is_in_onnx_export()`` is False, so
code that branches on it takes its ordinary path.
"""

__all__ = ["export", "is_in_onnx_export", "OnnxExporterError"]


class OnnxExporterError(RuntimeError):
    """``torch.onnx.OnnxExporterError``: an export failed."""


def is_in_onnx_export():
    """Whether an ONNX export is running: never in ember."""
    return False


def export(model, args=(), f=None, **kwargs):
    """Not supported: raises NotImplementedError (see the module docstring)."""
    raise NotImplementedError(
        "torch.onnx.export is not supported by ember: ember runs models eagerly on NumPy and "
        "does not build the operator graph an ONNX file is made from. Export the model with "
        "PyTorch instead (ember's torch.save files load in PyTorch).")
