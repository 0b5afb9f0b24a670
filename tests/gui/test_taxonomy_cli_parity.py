"""The Taxonomies step's buttons and `ppdp run --build-taxonomy` make the same trees (the rule: the window and
the command line call the same engine function for every step), with the same default interval width and the
same origin; the window's project, saved, holds what the command line keeps in its recipe."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_gui.cli import build_parser, load_dataset
from ppdp_gui.engine.data.schema import Role


def test_window_buttons_and_cli_build_the_same_trees(make_window, qtbot, tmp_path):
    rng = np.random.default_rng(3)
    n = 400
    days = pd.Timestamp("2018-01-01") + pd.to_timedelta(rng.integers(0, 2000, n), unit="D")
    frame = pd.DataFrame({"admitted": days.strftime("%d/%m/%Y"), "sex": rng.choice(["F", "M"], n),
                          "charges": rng.integers(0, 100_000, n)})
    path = tmp_path / "ward.csv"
    frame.to_csv(path, index=False)

    w = make_window()
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    for col in ("admitted", "sex", "charges"):
        w.session.set_role(col, Role.QUASI_IDENTIFIER)
    tv = w.taxonomy_view
    w.go_to(tv)
    tv.select("sex")
    tv.flat_button.click()
    tv.select("charges")
    assert tv.width_box.value() == 10_000  # the one default width is absurd for this range
    tv.intervals_button.click()
    tv.select("admitted")
    tv.dates_button.click()
    window = {c: w.session.dataset.spec(c).taxonomy for c in ("admitted", "sex", "charges")}

    argv = ["run", "Mondrian", "-i", str(path), "-o", str(tmp_path / "out.csv"),
            "--build-taxonomy", "sex=flat", "--build-taxonomy", "charges=intervals",
            "--build-taxonomy", "admitted=dates"]
    recipe, _loaded = load_dataset(build_parser().parse_args(argv))
    for col, tax in window.items():
        assert tax is not None, col
        assert recipe.taxonomies[col].to_paths() == tax.to_paths(), col
        assert recipe.taxonomies[col].origin == tax.origin == "data", col
    saved = w.session.recipe().taxonomies
    assert {c: saved[c].to_paths() for c in window} == {c: t.to_paths() for c, t in recipe.taxonomies.items()}
