"""A read-only Qt table model over a pandas DataFrame that formats cells only when the view asks.

Each column is kept as its own backing array (numpy for numbers: no copy; pandas' string array for text: no
conversion) and `data()` indexes it, so a 1,000,000-row table costs the view only what is on screen (a few µs
per visible cell). No QStandardItem, no per-cell Python objects.
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


class DataFrameModel(QAbstractTableModel):
    """Table model for any DataFrame; `set_frame` swaps the table in one reset."""

    def __init__(self, frame: pd.DataFrame | None = None, parent=None):
        super().__init__(parent)
        self._frame = None  # no table yet (an empty DataFrame is made when asked: pandas may not be imported yet)
        self._columns: list[np.ndarray | None] = []
        self._align: list[int] = []
        self._names: list[str] = []
        self._tooltips: dict[str, str] = {}
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
        self.endResetModel()

    def clear(self) -> None:
        """No table (the same as an empty DataFrame, without needing pandas)."""
        self.beginResetModel()
        self._frame, self._names, self._columns, self._align = None, [], [], []
        self.endResetModel()

    def column_array(self, i: int):
        col = self._columns[i]
        if col is None:
            series = self._frame.iloc[:, i]
            col = series.to_numpy() if isinstance(series.dtype, np.dtype) else series.array
            self._columns[i] = col
        return col

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
        if role == Qt.DisplayRole or role == Qt.ToolTipRole:
            return format_cell(self.column_array(index.column())[index.row()])
        if role == Qt.TextAlignmentRole:
            return self._align[index.column()]
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal:
            if section >= len(self._names):
                return None
            name = self._names[section]
            if role == Qt.DisplayRole:
                return name
            if role == Qt.ToolTipRole:
                return self._tooltips.get(name, name)
            return None
        if role == Qt.DisplayRole:
            return str(section + 1)
        return None

    def flags(self, index):
        if not index.isValid():
            return Qt.NoItemFlags
        return Qt.ItemIsEnabled | Qt.ItemIsSelectable


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
        if fast:  # one slice per column: indexing pandas arrays cell by cell costs ~20 µs a cell
            texts += [format_cell(v) for v in model.column_array(c)[:rows]]
        else:
            texts += [str(model.data(model.index(r, c)) or "") for r in range(rows)]
        view.setColumnWidth(c, min(cap, max(metrics.horizontalAdvance(t) for t in texts) + pad))
