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
    tv.choose_builder("flat")
    tv.build_button.click()
    tv.select("charges")
    tv.choose_builder("intervals")
    assert tv.builder_fields["intervals"]["width"].text() == "10000"  # the one default width is absurd here
    tv.build_button.click()
    tv.select("admitted")
    tv.choose_builder("dates")
    tv.build_button.click()
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


def test_window_and_cli_offer_the_same_builders_and_outputs(make_window, capsys):
    """Issue 26, finding 6: every builder of `ppdp --build-taxonomy` is in the Taxonomies step, with the same
    fields, and every output `ppdp run` writes (table, release note, custodian record, PDF) is in the Export
    step — both enumerated from the engine's registries."""
    from ppdp_gui.cli import main
    from ppdp_gui.engine.outputs import OUTPUTS
    from ppdp_gui.engine.taxonomy.registry import BUILDERS

    w = make_window()
    tv = w.taxonomy_view
    offered = [tv.builder_combo.itemData(i) for i in range(tv.builder_combo.count())]
    assert offered == [b.name for b in BUILDERS]
    assert {"intervals", "bands", "dates", "mask", "icd9", "icd10", "flat"} <= set(offered)
    for b in BUILDERS:
        assert list(tv.builder_fields[b.name]) == [p.name for p in b.params], b.name

    assert main(["builders"]) == 0
    listed = capsys.readouterr().out
    help_text = " ".join(build_parser().format_help().split())
    for b in BUILDERS:
        assert b.spelling in listed, b.name
    run_options = {opt for action in build_parser()._subparsers._group_actions[0].choices["run"]._actions
                   for opt in action.option_strings}
    for out in OUTPUTS:
        assert out.flag in run_options, out.name
        assert w.export_view.output_controls[out.name] is not None, out.name
    assert help_text
