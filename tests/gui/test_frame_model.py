"""The DataFrame table model reads cells on demand: a 1,000,000-row table costs only what is on screen."""

from __future__ import annotations

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableView

from ppdp_gui.gui.models import DataFrameModel
from ppdp_gui.gui.models.frame_model import format_cell


class CountingModel(DataFrameModel):
    def __init__(self, frame):
        super().__init__(frame)
        self.rows_asked: set[int] = set()

    def data(self, index, role=Qt.DisplayRole):
        if role == Qt.DisplayRole:
            self.rows_asked.add(index.row())
        return super().data(index, role)


def big_frame(n=1_000_000) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({"age": rng.integers(17, 91, n), "score": rng.random(n),
                         "sex": pd.Series(np.where(rng.random(n) < 0.5, "Male", "Female"), dtype="str")})


def test_million_rows_only_visible_cells_are_read(qtbot):
    frame = big_frame()
    model = CountingModel(frame)
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(600, 400)
    view.show()
    qtbot.waitExposed(view)
    assert model.rowCount() == 1_000_000 and model.columnCount() == 3
    view.scrollToBottom()
    view.grab()  # paint
    assert max(model.rows_asked) == 999_999  # the last row is reachable and drawn
    # a few screens' worth of rows at most were formatted, never the whole table
    assert len(model.rows_asked) < 500
    view.scrollTo(model.index(500_000, 0))
    view.grab()
    assert 500_000 in model.rows_asked and len(model.rows_asked) < 1000


def test_cells_and_headers_are_formatted():
    frame = pd.DataFrame({"a": [1.0, np.nan, 1 / 3], "b": ["x", None, "z"], "n": [1, 2, 3]})
    model = DataFrameModel(frame)
    cell = lambda r, c: model.data(model.index(r, c))  # noqa: E731
    assert [cell(r, 0) for r in range(3)] == ["1", "", "0.333333"]
    assert cell(1, 1) == "" and cell(2, 1) == "z" and cell(0, 2) == "1"
    assert model.headerData(0, Qt.Horizontal) == "a" and model.headerData(0, Qt.Vertical) == "1"
    assert model.data(model.index(0, 2), Qt.TextAlignmentRole) & int(Qt.AlignRight)
    assert format_cell(pd.NA) == "" and format_cell(np.float32(2.5)) == "2.5"
    model.set_header_tooltips({"a": "a: numeric"})
    assert model.headerData(0, Qt.Horizontal, Qt.ToolTipRole) == "a: numeric"
    assert not model.flags(model.index(0, 0)) & Qt.ItemIsEditable


def test_fit_columns_reads_only_a_sample(qtbot):
    from ppdp_gui.gui.models import fit_columns
    frame = big_frame(200_000)
    frame.loc[50, "sex"] = "a very long value beyond the sample " * 3  # row 51: outside the sample
    model = CountingModel(frame)
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    fit_columns(view, sample=50)
    assert model.rows_asked <= set(range(50))  # cells are read from the column arrays, never past the sample
    assert view.fontMetrics().horizontalAdvance("Female") < view.columnWidth(2) \
        < view.fontMetrics().horizontalAdvance("a very long value")


def test_cells_read_in_blocks_match_cell_by_cell_formatting():
    """Cells are formatted a block of rows at a time; every cell, at block edges and in a last partial block, of
    every kind of column, reads as format_cell of its value read alone from the column's backing array."""
    from ppdp_gui.gui.models.frame_model import BLOCK
    n = 2 * BLOCK + 7
    rng = np.random.default_rng(3)
    text = pd.Series(np.where(rng.random(n) < 0.5, "Male", "Female"), dtype="str")
    text[BLOCK] = None
    frame = pd.DataFrame({"i": np.arange(n), "f": rng.random(n), "s": text,
                          "n": pd.array([None if r % 5 == 0 else r for r in range(n)], dtype="Int64"),
                          "d": pd.date_range("2020-01-01", periods=n, freq="D"),
                          "o": pd.Series([("x", r) if r % 2 else r / 3 for r in range(n)], dtype=object)})
    model = DataFrameModel(frame)
    for row in (0, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK, n - 1):
        for col, name in enumerate(frame.columns):
            expected = format_cell(model.column_array(col)[row])
            assert model.data(model.index(row, col)) == expected, (row, name)
    assert model.data(model.index(BLOCK, 2)) == "" and model.data(model.index(0, 3)) == ""
    model.set_frame(frame.iloc[::-1].reset_index(drop=True))  # a new table forgets the texts of the old one
    assert model.data(model.index(0, 0)) == str(n - 1)
