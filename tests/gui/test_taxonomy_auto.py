"""Opening a table attaches the ARX hierarchies named after it; the Taxonomies step says which, shows a coverage
gap of such a file and a file that could not be read, and never fails the load for them."""

from __future__ import annotations

import shutil

from ppdp_gui.engine.data.schema import Role


def test_arx_files_beside_the_table_are_attached(make_window, qtbot, shared_data, tmp_path):
    src = shared_data / "arx_examples"
    shutil.copy(src / "test2.csv", tmp_path / "test2.csv")
    lines = (src / "test2_hierarchy_Age.csv").read_text().splitlines()
    (tmp_path / "test2_hierarchy_Age.csv").write_text("\n".join(lines[1:]) + "\n")  # first age value left out
    (tmp_path / "test2_hierarchy_ZIPCode.csv").write_bytes(b"\x00\x01 not a hierarchy")
    w = make_window()
    w.open_path(str(tmp_path / "test2.csv"))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    ds = w.session.dataset
    assert ds.spec("Age").role == Role.QUASI_IDENTIFIER and ds.spec("Age").taxonomy is not None
    assert ds.spec("ZIPCode").taxonomy is None
    assert w.session.auto_attached("Age") == str(tmp_path / "test2_hierarchy_Age.csv")
    w.go_to(w.taxonomy_view)
    status = w.taxonomy_view.column_status("Age")
    assert "attached automatically" in status and "1 data value not in the tree" in status
    w.taxonomy_view.select("Age")
    assert "test2_hierarchy_Age.csv" in w.taxonomy_view.columns.currentItem().toolTip()
    summary = w.taxonomy_view.summary.text()
    assert "1 attached automatically" in summary and "(Age)" in summary
    assert "test2_hierarchy_ZIPCode.csv was not attached to ZIPCode" in summary
    # once the user replaces it, it is no longer called automatic
    w.taxonomy_view.select("Age")
    w.taxonomy_view.choose_builder("flat")
    w.taxonomy_view.build_button.click()
    assert w.session.auto_attached("Age") is None
    assert "automatically" not in w.taxonomy_view.column_status("Age")


def test_bundled_sample_opens_with_its_taxonomies(loaded_window):
    w = loaded_window
    ds = w.session.dataset
    assert all(ds.spec(c).taxonomy is not None for c in ds.quasi_identifiers)
    assert f"all {len(ds.quasi_identifiers)} quasi-identifiers covered" in w.step_texts()[1]
    assert "attached automatically" in w.taxonomy_view.column_status("education")
    assert w.session.auto_attached("education").endswith("adult_hierarchy_education.csv")
