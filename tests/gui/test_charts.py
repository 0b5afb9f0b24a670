"""Sweep and class-size charts: the drawn data is the summary's, reference lines and log axes are set, PNGs export."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PySide6 import QtGui

from ppdp_gui.gui.charts import HistogramChart, SweepChart, size_histogram
from ppdp_gui.gui.charts.summary import points, tidy

EPS = [0.1, 0.5, 1.0, 2.0, 0.05]  # deliberately unsorted: the chart must sort by x


def sweep_rows(shift: float = 0.0, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for eps in EPS:
        for rep in range(3):
            rows.append({"epsilon": eps, "h": 4, "repeat": rep,
                         "accuracy %": 75 + 10 * eps / (1 + eps) + shift + rng.normal(0, 1),
                         "discernibility": 1000 / eps + rng.normal(0, 5)})
    return pd.DataFrame(rows)


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.groupby(["epsilon", "h"])[["accuracy %", "discernibility"]].agg(["mean", "std"])


@pytest.fixture
def chart(qtbot):
    widget = SweepChart()
    qtbot.addWidget(widget)
    widget.resize(900, 500)
    return widget


def test_series_curve_is_the_summary_mean(chart):
    rows = sweep_rows()
    summary = summarise(rows)
    chart.set_log_hints({"epsilon": True})
    chart.add_series("release A", summary, ["epsilon", "h"])
    assert chart.param_combo.currentText() == "epsilon"
    chart.measure_combo.setCurrentText("accuracy %")
    [curve] = chart.curves("release A")
    x, y = curve.getOriginalDataset()
    expected = rows.groupby("epsilon")["accuracy %"].mean().sort_index()
    np.testing.assert_allclose(x, expected.index.to_numpy())
    np.testing.assert_allclose(y, expected.to_numpy())
    # switching the measure updates the same item in place
    chart.set_measure("discernibility")
    [again] = chart.curves("release A")
    assert again is curve
    np.testing.assert_allclose(again.getOriginalDataset()[1],
                               rows.groupby("epsilon")["discernibility"].mean().sort_index().to_numpy())


def test_spread_bars_are_std_and_log_axis(chart):
    rows = sweep_rows()
    chart.set_log_hints({"epsilon": True})
    chart.add_series("A", summarise(rows))
    chart.measure_combo.setCurrentText("accuracy %")
    assert chart.plot.getPlotItem().getAxis("bottom").logMode
    assert chart.log_check.isChecked()
    chart.spread_combo.setCurrentIndex(1)
    bars = chart._series["A"].curves[0].bars
    assert bars.isVisible()
    std = rows.groupby("epsilon")["accuracy %"].std().sort_index().to_numpy()
    np.testing.assert_allclose(bars.opts["top"], std)
    # on a log axis the bars sit at log10(epsilon), where the mean curve's points are drawn
    np.testing.assert_allclose(bars.opts["x"], np.log10(sorted(EPS)))
    chart.log_check.setChecked(False)
    assert not chart.plot.getPlotItem().getAxis("bottom").logMode
    np.testing.assert_allclose(bars.opts["x"], sorted(EPS))


def test_linear_parameter_is_not_log(chart):
    summary = pd.DataFrame({"k": [2, 5, 10, 20], "loss mean": [0.1, 0.2, 0.3, 0.4], "loss std": [0, 0, 0, 0]})
    chart.add_series("Mondrian", summary)
    assert chart.param_combo.currentText() == "k"
    assert chart.measure_combo.currentText() == "loss"
    assert not chart.log_check.isChecked()


def test_several_series_have_distinct_colours_and_legend(chart):
    chart.add_series("A", summarise(sweep_rows()))
    chart.add_series("B", summarise(sweep_rows(shift=-3, seed=1)))
    colours = {chart.curves(n)[0].opts["pen"].color().name() for n in ("A", "B")}
    assert len(colours) == 2
    labels = [label.text for _item, label in chart.legend.items]
    assert labels == ["A", "B"]
    chart.remove_series("A")
    assert [label.text for _item, label in chart.legend.items] == ["B"]


def test_reference_lines(chart):
    chart.add_series("A", summarise(sweep_rows()))
    chart.measure_combo.setCurrentText("accuracy %")
    chart.set_reference({"BA %": 85.3, "LA %": 75.5, "discernibility": 900.0})
    lines = chart.reference_lines()
    assert {k: line.value() for k, line in lines.items()} == {"BA %": 85.3, "LA %": 75.5, "discernibility": 900.0}
    assert chart.reference_label("BA %") == "Accuracy on the original data: BA % = 85.3"
    legend = [label.text for _item, label in chart.legend.items]
    assert "Accuracy on the original data: BA % = 85.3" in legend  # named in the legend, below the axes
    assert lines["BA %"].isVisible() and lines["LA %"].isVisible()
    assert not lines["discernibility"].isVisible()  # named after another measure: only with that measure
    chart.set_measure("discernibility")
    assert lines["discernibility"].isVisible()
    assert chart.measure_combo.currentText() == "Pairs of look-alike rows (discernibility)"  # the plain title shown
    chart.ref_check.setChecked(False)
    assert not any(line.isVisible() for line in lines.values())
    chart.set_reference({"BA %": 80.0})
    assert list(chart.reference_lines()) == ["BA %"]
    assert chart.reference_lines()["BA %"] is lines["BA %"]  # updated, not recreated


def test_add_result_uses_summary_and_reference(chart):
    rows = sweep_rows()

    class FakeSweep:  # the pipeline's SweepResult shape
        param_names = ["epsilon", "h"]
        reference = {"BA %": 85.3}

        def __init__(self):
            self.rows = rows

        def summary(self):
            return summarise(self.rows)

    chart.add_result("DiffGen", FakeSweep(), log_hints={"epsilon": True})
    assert chart.series_names() == ["DiffGen"]
    assert "BA %" in chart.reference_lines()


def test_real_sweep_result_is_drawn(chart):
    from ppdp_gui.engine.pipeline.sweep import SweepResult

    rows = sweep_rows().drop(columns="h").assign(seconds=0.1)
    result = SweepResult("any", ["epsilon"], rows, reference={"BA %": 85.3, "LA %": 75.5})
    chart.add_result("release", result, log_hints={"epsilon": True})
    assert chart.measure_combo.count() == 2  # accuracy %, discernibility ("seconds" is not a measure)
    chart.measure_combo.setCurrentText("accuracy %")
    [curve] = chart.curves("release")
    np.testing.assert_allclose(curve.getOriginalDataset()[1],
                               rows.groupby("epsilon")["accuracy %"].mean().sort_index().to_numpy())
    assert set(chart.reference_lines()) == {"BA %", "LA %"}


def test_other_varying_parameter_splits_curves(chart):
    rows = pd.concat([sweep_rows().assign(h=4), sweep_rows(seed=2).assign(h=8)])
    chart.add_series("A", summarise(rows))
    chart.param_combo.setCurrentText("epsilon")
    names = [label.text for _item, label in chart.legend.items]
    assert names == ["A (h=4)", "A (h=8)"]
    chart.param_combo.setCurrentText("h")
    assert len(chart.curves("A")) == len(EPS)


def test_summary_shapes_are_read_alike():
    rows = sweep_rows()
    multi = summarise(rows)
    flat = multi.copy()
    flat.columns = [f"{m} {s}" for m, s in flat.columns]
    flat = flat.reset_index()
    long = (rows.melt(id_vars=["epsilon", "h", "repeat"], var_name="measure")
            .groupby(["epsilon", "h", "measure"])["value"].agg(["mean", "std"]).reset_index())
    ref = points(multi, "epsilon", "accuracy %")
    for shape in (flat, long):
        frame, params, measures = tidy(shape)
        assert set(measures) == {"accuracy %", "discernibility"}
        assert "epsilon" in params
        got = points(shape, "epsilon", "accuracy %", ["epsilon", "h"])
        np.testing.assert_allclose(got[0].mean, ref[0].mean)
        np.testing.assert_allclose(got[0].std, ref[0].std)


def test_png_export(chart, tmp_path):
    chart.add_series("A", summarise(sweep_rows()))
    out = chart.export_png(tmp_path / "sweep.png", width=800)
    assert out.stat().st_size > 1000
    image = QtGui.QImage(str(out))
    assert image.width() == 800
    # the dialog is injectable: the button writes where the dialog says
    chart.save_dialog = lambda *_a: str(tmp_path / "via_button.png")
    chart.export_button.click()
    assert (tmp_path / "via_button.png").stat().st_size > 1000


def test_histogram_counts_classes_and_records(qtbot, tmp_path):
    hist = HistogramChart()
    qtbot.addWidget(hist)
    sizes = np.array([2, 2, 3, 5, 5, 5, 9])
    hist.set_sizes(sizes, k=3)
    x, h = hist.bar_data()
    np.testing.assert_array_equal(x, [2, 3, 5, 9])
    np.testing.assert_array_equal(h, [2, 1, 3, 1])
    assert hist.k_line.isVisible() and hist.k_line.value() == 2.5
    assert "7 groups" in hist.summary_label.text()
    hist.mode_combo.setCurrentIndex(1)
    np.testing.assert_array_equal(hist.bar_data()[1], [4, 3, 15, 9])
    assert hist.export_png(tmp_path / "h.png").stat().st_size > 1000
    # a table of noisy counts: the same chart, its words about counts
    hist.mode_combo.setCurrentIndex(0)
    hist.set_sizes(np.array([0, 3, 3, 12]), kind="counts")
    x, h = hist.bar_data()
    np.testing.assert_array_equal(h, [2, 1])  # bins 3–4 and 10–12: skewed counts stay readable
    ticks = hist.plot.getPlotItem().getAxis("bottom")._tickLevels[0]
    assert [t for _x, t in ticks] == ["3–4", "10–12"]
    assert not hist.k_line.isVisible() and hist.mode_combo.itemText(0) == "Number of released rows"
    assert "4 released rows" in hist.summary_label.text() and "add up to 18 records" in hist.summary_label.text()
    assert "1 row with count 0" in hist.summary_label.text() and "counts from 0 to 12" in hist.summary_label.text()
    hist.set_sizes(np.array([3, 12]), kind="counts")
    assert "counts from 3 to 12" in hist.summary_label.text() and "count 0" not in hist.summary_label.text()
    assert "noisy count" in hist.plot.getPlotItem().getAxis("bottom").labelText


def test_histogram_bins_large_sizes():
    sizes = np.arange(1, 1001)
    x, h, w = size_histogram(sizes)
    assert len(x) <= 40 and h.sum() == 1000
    assert size_histogram(np.array([], dtype=int))[0].size == 0


def test_font_renders_text(chart):
    metrics = QtGui.QFontMetrics(chart.measure_combo.font())
    assert metrics.inFont("A")
    assert metrics.horizontalAdvance("iiii") < metrics.horizontalAdvance("WWWW")


def test_parameter_combo_and_axis_show_the_given_labels(chart):
    chart.set_labels({"epsilon": "Privacy budget ε", "h": "Specialisations h"})
    chart.set_log_hints({"epsilon": True})
    chart.add_series("release A", summarise(sweep_rows()), ["epsilon", "h"])
    texts = [chart.param_combo.itemText(i) for i in range(chart.param_combo.count())]
    assert texts == ["Privacy budget ε", "Specialisations h"]
    assert chart.param_combo.currentData() == "epsilon"
    axis = chart.plot.getPlotItem().getAxis("bottom")
    assert "Privacy budget ε" in axis.labelText and chart.log_check.isChecked()
    chart.param_combo.setCurrentIndex(1)  # choosing by label still selects the named column
    assert "Specialisations h" in axis.labelText and not chart.log_check.isChecked()


def crowded_result():
    from ppdp_gui.engine.pipeline.sweep import SweepResult
    rows = [{"h": h, "repeat": r, "seconds": 0.1, "CA %": 70 + h / 10 + r, "rows released": 10.0 * h}
            for h in (10, 11, 12, 13, 14, 15, 16, 17, 100) for r in range(2)]
    return SweepResult("any", ["h"], pd.DataFrame(rows), reference={"BA %": 85.0, "LA %": 75.0})


def drawn_labels(axis, draw=None) -> list:
    image = QtGui.QImage(400, 400, QtGui.QImage.Format_ARGB32)
    painter = QtGui.QPainter(image)
    try:
        return [rect for rect, _flags, _text in (draw or axis.generateDrawSpecs)(painter)[2]]
    finally:
        painter.end()


def overlapping(rects) -> bool:
    return any(a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1:])


def test_tick_labels_never_overlap(qtbot):
    chart = SweepChart()
    qtbot.addWidget(chart)
    chart.resize(420, 300)  # narrow: eight close grid values do not fit side by side
    chart.show()
    chart.add_result("h sweep", crowded_result())
    qtbot.wait(50)
    axis = chart.plot.getPlotItem().getAxis("bottom")
    import pyqtgraph as pg
    assert overlapping(drawn_labels(axis, lambda p: pg.AxisItem.generateDrawSpecs(axis, p)))  # pyqtgraph alone
    rects = drawn_labels(axis)
    assert 2 <= len(rects) < 9 and not overlapping(rects)  # some labels dropped, none overlapping


def test_reference_lines_are_named_below_the_axes_not_on_the_plot(chart, qtbot):
    chart.show()
    chart.add_result("h sweep", crowded_result())
    qtbot.wait(50)
    item = chart.plot.getPlotItem()
    view = item.getViewBox().sceneBoundingRect()
    legend = chart.legend.sceneBoundingRect()
    assert legend.top() >= view.bottom()  # the legend sits under the plot area
    assert all(getattr(line, "label", None) is None for line in chart.reference_lines().values())  # no text on it
    texts = [label.text for _item, label in chart.legend.items]
    assert "Accuracy of always guessing: LA % = 75" in texts


def test_the_chart_follows_the_sweep_just_run(chart):
    from ppdp_gui.engine.pipeline.sweep import SweepResult
    k_rows = pd.DataFrame([{"k": k, "repeat": 0, "seconds": 0.1, "NCP %": k / 2} for k in (2, 5, 10)])
    chart.add_result("Mondrian: k (1)", SweepResult("Mondrian", ["k"], k_rows), labels={"k": "k"})
    chart.focus("Mondrian: k (1)", "k")
    eps_rows = sweep_rows().drop(columns=["h", "discernibility"]).rename(columns={"accuracy %": "CA %"})
    chart.add_result("DiffGen: ε (2)", SweepResult("DiffGen", ["epsilon"], eps_rows.assign(seconds=0.1),
                                                   reference={"BA %": 85.3}),
                     labels={"epsilon": "Privacy budget ε"})
    chart.focus("DiffGen: ε (2)", "epsilon")
    assert [chart.param_combo.itemData(i) for i in range(chart.param_combo.count())] == ["epsilon"]
    assert [chart.measure_combo.itemData(i) for i in range(chart.measure_combo.count())] == ["CA %"]
    assert "Privacy budget ε" in chart.plot.getPlotItem().getAxis("bottom").labelText
    assert "Classification accuracy (CA %)" in chart.plot.getPlotItem().getAxis("left").labelText
    assert chart.curves("Mondrian: k (1)") == [] and len(chart.curves("DiffGen: ε (2)")) == 1
    legend = [label.text for _i, label in chart.legend.items]
    assert "DiffGen: ε (2)" in legend and "Mondrian: k (1)" not in legend
    chart.focus("Mondrian: k (1)")  # back to the earlier simulation: its own axis and measure
    assert chart.param_combo.currentData() == "k" and chart.measure_combo.currentData() == "NCP %"
    assert "BA %" not in chart.reference_lines()
