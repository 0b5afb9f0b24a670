"""DP-LDA's figures on a tiny release (found by the conformance kit, issue 29): when each class is one point the
LDA figures are 'not available' (NaN) and the tree's are given — not an IndexError from scikit-learn's solver."""

import numpy as np
import pandas as pd

from ppdp_gui.engine.metrics.component_analysis import classifier_scores


def test_lda_figures_of_classes_without_spread_are_not_a_traceback():
    train = pd.DataFrame({"age": [42.0] * 5 + [49.0] * 4, "cls": ["YES"] * 5 + ["NO"] * 4})
    test = pd.DataFrame({"age": [41.0, 50.0, 42.0], "cls": ["YES", "NO", "NO"]})
    out = classifier_scores(train, test, "cls", ["age"])
    assert np.isnan(out["ACA LDA %"]) and np.isnan(out["AUC LDA"])
    assert 0 <= out["ACA tree %"] <= 100


def test_classes_with_spread_still_get_lda_figures():
    train = pd.DataFrame({"age": [40.0, 42.0, 44.0, 48.0, 50.0, 52.0], "cls": ["YES"] * 3 + ["NO"] * 3})
    out = classifier_scores(train, train, "cls", ["age"])
    assert out["ACA LDA %"] == 100.0 and out["AUC LDA"] == 1.0
