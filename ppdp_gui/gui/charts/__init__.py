"""pyqtgraph charts: utility against privacy from sweeps, equivalence-class sizes and re-identification
risk. Mechanism-agnostic."""

from ppdp_gui.gui.charts.histogram_chart import HistogramChart, size_histogram
from ppdp_gui.gui.charts.risk_chart import RiskChart
from ppdp_gui.gui.charts.sweep_chart import SweepChart

__all__ = ["HistogramChart", "RiskChart", "SweepChart", "size_histogram"]
