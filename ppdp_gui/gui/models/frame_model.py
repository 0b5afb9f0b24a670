"""A read-only Qt table model over a pandas DataFrame that formats cells only when the view asks.

Each column is kept as its own backing array (numpy for numbers: no copy; pandas' string array for text: no
conversion). Cells are formatted a block of rows at a time (BLOCK rows of one column, sliced and converted at
once) when the view first asks for one of them, and the texts kept for the blocks seen lately: so a
1,000,000-row table costs the view only what is on screen, and a repaint is a list look-up per cell. Reading
pandas' arrow-backed arrays cell by cell cost ~20 µs a cell: a screen of the Adult table took ~26 ms to paint
(bench_gui_heartbeat.py), ~3 ms now. No QStandardItem, no per-cell Python objects kept for the whole table.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

def format_cell(value) -> str:
    """How one value is shown: floats to 6 significant digits, missing values as an empty cell."""
    if value is None:
        return ""
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return ""
        return f"{value:.6g}"
    if value is pd.NA or value is pd.NaT:
        return ""
    return str(value)


# Qt's names read once: `Qt.DisplayRole` costs ~3 µs a look-up in PySide 6.11, and a view asks data() for ~5
# roles of every visible cell at each repaint (a screen of the Adult table: ~2,000 calls)
_DISPLAY, _TOOLTIP, _ALIGNMENT = Qt.DisplayRole, Qt.ToolTipRole, Qt.TextAlignmentRole
_HORIZONTAL = Qt.Horizontal
_NO_FLAGS, _CELL_FLAGS = Qt.NoItemFlags, Qt.ItemIsEnabled | Qt.ItemIsSelectable

BLOCK = 128  # rows formatted at once, per column
MAX_BLOCKS = 4096  # texts kept (about 500,000 cells); past that the oldest half is forgotten


def format_block(values) -> list[str]:
    """format_cell of every value of a slice of a column, converted in one go (an extension array's cells are
    slow to read one by one)."""
    if not isinstance(values, np.ndarray):
        values = np.asarray(values, dtype=object)
    return [format_cell(v) for v in values]


class DataFrameModel(QAbstractTableModel):
    """Table model for any DataFrame; `set_frame` swaps the table in one reset."""

    def __init__(self, frame: pd.DataFrame | None = None, parent=None):
        super().__init__(parent)
        self._frame = None  # no table yet (an empty DataFrame is made when asked: pandas may not be imported yet)
        self._columns: list[np.ndarray | None] = []
        self._align: list[int] = []
        self._names: list[str] = []
        self._tooltips: dict[str, str] = {}
        self._blocks: dict[tuple[int, int], list[str]] = {}  # (column, row // BLOCK) -> texts
        if frame is not None:
            self.set_frame(frame)

    # -- content ----------------------------------------------------------------------------------------
    def set_frame(self, frame: pd.DataFrame) -> None:
        self.beginResetModel()
        self._frame = frame
        self._names = [str(c) for c in frame.columns]
        self._columns = [None] * frame.shape[1]
        right = int(Qt.AlignRight | Qt.AlignVCenter)
        left = int(Qt.AlignLeft | Qt.AlignVCenter)
        self._align = [right if getattr(dt, "kind", "O") in "iuf" else left for dt in frame.dtypes]
        self._blocks = {}
        self.endResetModel()

    def clear(self) -> None:
        """No table (the same as an empty DataFrame, without needing pandas)."""
        self.beginResetModel()
        self._frame, self._names, self._columns, self._align = None, [], [], []
        self._blocks = {}
        self.endResetModel()

    def column_array(self, i: int):
        col = self._columns[i]
        if col is None:
            series = self._frame.iloc[:, i]
            col = series.to_numpy() if isinstance(series.dtype, np.dtype) else series.array
            self._columns[i] = col
        return col

    def text(self, row: int, column: int) -> str:
        """The cell as shown (format_cell), from its block of formatted rows."""
        key = (column, row // BLOCK)
        block = self._blocks.get(key)
        if block is None:
            start = key[1] * BLOCK
            block = format_block(self.column_array(column)[start:start + BLOCK])
            if len(self._blocks) >= MAX_BLOCKS:
                for old in list(self._blocks)[:MAX_BLOCKS // 2]:  # dicts keep insertion order: oldest first
                    del self._blocks[old]
            self._blocks[key] = block
        return block[row - key[1] * BLOCK]

    def set_header_tooltips(self, tips: dict[str, str]) -> None:
        """Tooltips per column name (e.g. the column's kind and role) shown on the header."""
        self._tooltips = dict(tips)
        if self._names:
            self.headerDataChanged.emit(Qt.Horizontal, 0, len(self._names) - 1)

    @property
    def frame(self) -> pd.DataFrame:
        if self._frame is None:
            self._frame = pd.DataFrame()
        return self._frame

    # -- Qt model protocol -------------------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() or self._frame is None else len(self._frame)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._names)

    def data(self, index, role=Qt.DisplayRole):
        if role == _DISPLAY or role == _TOOLTIP:
            return self.text(index.row(), index.column())
        if role == _ALIGNMENT:
            return self._align[index.column()]
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == _HORIZONTAL:
            if section >= len(self._names):
                return None
            name = self._names[section]
            if role == _DISPLAY:
                return name
            if role == _TOOLTIP:
                return self._tooltips.get(name, name)
            return None
        if role == _DISPLAY:
            return str(section + 1)
        return None

    def flags(self, index):
        if not index.isValid():
            return _NO_FLAGS
        return _CELL_FLAGS


def fit_columns(view, sample: int = 50, max_chars: int = 40) -> None:
    """Size a table view's columns from the header and the first `sample` rows only.

    QTableView.resizeColumnsToContents walks far more of a long model than that (seconds on millions of rows).
    """
    model = view.model()
    metrics = view.fontMetrics()
    pad = metrics.horizontalAdvance("0") * 2 + 8
    cap = metrics.horizontalAdvance("0") * max_chars
    rows = min(sample, model.rowCount())
    fast = isinstance(model, DataFrameModel)
    for c in range(model.columnCount()):
        texts = [str(model.headerData(c, Qt.Horizontal) or "")]
        if fast:  # one block per column: indexing pandas arrays cell by cell costs ~20 µs a cell
            texts += [model.text(r, c) for r in range(rows)]
        else:
            texts += [str(model.data(model.index(r, c)) or "") for r in range(rows)]
        view.setColumnWidth(c, min(cap, max(metrics.horizontalAdvance(t) for t in texts) + pad))
