"""``torch.utils.benchmark``: timing statements (``Timer``) and the results (``Measurement``),
printed as PyTorch prints them. See ``utils/timer.py`` for where ember differs."""
from .utils.common import Measurement, TaskSpec, select_unit, unit_to_english
from .utils.compare import Colorize, Compare
from .utils.timer import Language, Timer, timer

__all__ = ["Timer", "Measurement", "Compare", "Colorize", "TaskSpec", "Language", "timer",
           "select_unit", "unit_to_english"]
