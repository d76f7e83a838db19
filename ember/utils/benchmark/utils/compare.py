"""``torch.utils.benchmark.utils.compare``: ``Compare``, a table of many Measurements.

One table per ``label``; a row per (threads, env, ``sub_label`` or statement), a column per
``description``; each cell is the median, in the unit of the table's fastest result. Rows are
grouped under "N threads:" separators. ``trim_significant_figures``, ``colorize`` and
``highlight_warnings`` change the cells as in PyTorch. Where PyTorch fails on a Measurement
without a ``description`` (its header cannot take None), ember leaves the header empty.
"""
from __future__ import annotations

import enum
import math

from . import common

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _ordered_unique(items):
    return list(dict.fromkeys(items))


def _leading_digits(value):
    return int(math.ceil(math.log10(value)))


def _color(text, value, best):
    """``text`` coloured by how ``value`` compares with the best value of its group."""
    if value <= best * 1.01 or value <= best + 100e-9:
        return BEST + BOLD + text + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + text + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + text + TERMINATE * 2
    if value >= best * 2:
        return BAD + text + TERMINATE * 2
    return text


class _Column:
    """How the numbers of one column are printed: one width and precision for all."""

    def __init__(self, results, scale, trim, highlight):
        present = [m for m in results if m is not None]
        self.trim = trim
        self.highlight = highlight and any(m.has_warnings for m in present)
        digits = [_leading_digits(m.median / scale) for m in present]
        self.decimals = (min(max(m.significant_figures - d, 0) for d, m in zip(digits, present))
                         if trim else 1)
        self.length = max(digits) + self.decimals + (1 if self.decimals else 0)

    def text(self, value, sigfigs, spread):
        if value is None:
            return " " * len(self.text(1, sigfigs, None))
        if self.trim:
            value = common.trim_sigfig(value, sigfigs)
        note = f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None else ""
        return f"{value:>{self.length}.{self.decimals}f}{note:>{7 if self.highlight else 0}}"


def _table(results, colorize, trim, highlight):
    """The printed table of Measurements sharing one label."""
    unit, scale = common.select_unit(min(m.median for m in results))

    def row_key(m):
        return m.num_threads, m.env, m.as_row_name
    row_keys = _ordered_unique(row_key(m) for m in results)
    row_keys.sort(key=lambda k: k[:2])  # by threads and env; statements keep their order
    col_keys = _ordered_unique(m.description for m in results)
    grid = {(row_key(m), m.description): m for m in results}
    cells = [[grid.get((r, c)) for c in col_keys] for r in row_keys]

    groups = []  # the thread group of each row
    for i, key in enumerate(row_keys):
        groups.append(groups[-1] + (key[0] != row_keys[i - 1][0]) if i else 0)
    columns = [_Column([row[j] for row in cells], scale, trim, highlight)
               for j in range(len(col_keys))]

    envs = {m.env for m in results}
    env_width = max(len(str(e)) for e in envs) if len(envs) > 1 else 0
    text_rows = [[""] + ["" if c is None else c for c in col_keys]]
    for i, ((_, env, name), row) in enumerate(zip(row_keys, cells)):
        show_env = len(envs) > 1 and (i == 0 or groups[i] != groups[i - 1]
                                      or env != row_keys[i - 1][1])
        label = (f"({env})" if show_env else "").ljust(env_width + 4)
        text = ["  " + label + name]
        for m, column in zip(row, columns):
            text.append(column.text(None if m is None else m.median / scale,
                                    1 if m is None else m.significant_figures,
                                    m.iqr / m.median if m is not None and m.has_warnings
                                    else None))
        text_rows.append(text)
    widths = [max(len(r[j]) for r in text_rows) for j in range(len(text_rows[0]))]
    header = "  |  ".join(c.center(w) for c, w in zip(text_rows[0], widths))
    lines = [header]
    for i, (text, row) in enumerate(zip(text_rows[1:], cells)):
        if i == 0 or groups[i] != groups[i - 1]:
            lines.append(f"{row_keys[i][0]} threads: ".ljust(len(header), "-"))
        if colorize == Colorize.ROWWISE:
            best = [min(m.median for m in row if m is not None)] * len(row)
        elif colorize == Colorize.COLUMNWISE:
            best = []
            for j in range(len(row)):
                same_group = [cells[k][j] for k in range(len(cells)) if groups[k] == groups[i]]
                medians = [m.median for m in same_group if m is not None]
                best.append(min(medians) if medians else None)
        else:
            best = [None] * len(row)
        parts = [text[0].ljust(widths[0])]
        for cell, width, m, b in zip(text[1:], widths[1:], row, best):
            cell = cell.center(width)
            if colorize != Colorize.NONE and m is not None and b is not None:
                cell = _color(cell, m.median, b)
            parts.append(cell)
        lines.append("  |  ".join(parts))
    label = results[0].label or ""
    out = [f"[{(' ' + label + ' ').center(len(header) - 2, '-')}]", *lines, "",
           f"Times are in {common.unit_to_english(unit)}s ({unit}).", ""]
    if highlight and any(m.has_warnings for m in results):
        out.insert(-1, "(! XX%) Measurement has high variance, where XX is the IQR / median "
                       "* 100.")
    return "\n".join(out)


class Compare:
    """Print many Measurements as tables (see the module docstring)."""

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def extend_results(self, results):
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} "
                                 "instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        """Print each cell with the figures its measurement supports."""
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        """Colour cells by how far they are from the best (per column, or per row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        """Mark cells whose interquartile range is large."""
        self._highlight_warnings = True

    def print(self):
        print(str(self))

    def __str__(self):
        by_label = {}
        for m in common.Measurement.merge(self._results):
            by_label.setdefault(m.label, []).append(m)
        return "\n".join(_table(group, self._colorize, self._trim_significant_figures,
                                self._highlight_warnings) for group in by_label.values())
