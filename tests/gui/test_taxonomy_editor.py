"""Taxonomy editor on the ARX Adult hierarchies: edits give the expected Taxonomy, undo restores it exactly, redo
re-applies; interval preview, coverage warnings and ARX import/export through injected dialogs."""

from __future__ import annotations

import gzip

import pandas as pd
import pytest
from PySide6 import QtCore

from ppdp_gui.engine.taxonomy.tree import Taxonomy
from ppdp_gui.gui.taxonomy_editor import TaxonomyEditor, TaxonomyModel
from ppdp_gui.engine.taxonomy.editing import EditTree


@pytest.fixture(scope="module")
def adult(shared_data) -> pd.DataFrame:
    with gzip.open(shared_data / "adult" / "hierarchies" / "arx" / "adult.csv.gz", "rt") as fh:
        return pd.read_csv(fh, sep=";", dtype=str)


@pytest.fixture
def arx(shared_data):
    return lambda attr: shared_data / "adult" / "hierarchies" / "arx" / f"adult_hierarchy_{attr}.csv"


@pytest.fixture
def editor(qtbot, adult, arx):
    widget = TaxonomyEditor()
    qtbot.addWidget(widget)
    widget.resize(1000, 640)
    widget.set_column("education", Taxonomy.flat("education", adult["education"].unique()), adult["education"])
    assert widget.import_arx(arx("education"))
    return widget


def paths(editor: TaxonomyEditor) -> list[list[str]]:
    return editor.taxonomy().to_paths()


def labels(tax: Taxonomy) -> list[str]:
    out, stack = [], [0]
    while stack:
        node = stack.pop()
        out.append(tax.label(node))
        stack.extend(tax.children(node))
    return out


def parent_label(tax: Taxonomy, value: str) -> str:
    return tax.label(tax.parent(tax.leaf_node(value)))


def test_import_matches_the_arx_file(editor, arx):
    rows = [line.split(";") for line in arx("education").read_text().splitlines() if line]
    assert sorted(paths(editor)) == sorted(rows)
    tax = editor.taxonomy()
    assert tax.column == "education" and len(tax.leaves()) == 16
    assert parent_label(tax, "Masters") == "Graduate"
    assert editor.coverage().missing == [] and editor.coverage().unused == []


def test_model_is_a_valid_item_model(qtmodeltester, editor):
    """Qt's model tester stays connected and checks every signal of the edits below (batched and single)."""
    qtmodeltester.check(editor.model, force_py=True)
    tree = editor.tree()
    group = editor.new_group("Tmp", parent=tree.find("Higher education"), edit=False)
    editor.move_nodes([tree.find("Masters"), tree.find("9th")], group, 0)
    editor.insert_level([tree.find("Masters")], "Inner", edit=False)
    editor.delete_nodes([group])
    while editor.undo_stack.index() > 1:  # back to the import
        editor.undo_stack.undo()
    assert editor.taxonomy().height == 3
    from ppdp_gui.engine.taxonomy.editing import Add, Move, Remove, Rename

    model = TaxonomyModel(EditTree.from_taxonomy(editor.taxonomy()))
    qtmodeltester.check(model, force_py=True)
    t = model.tree
    inverses = [model.apply(op) for op in (Add(100, "G", 0, 1, True), Move(t.find("Masters"), 100, 0),
                                           Move(t.find("Doctorate"), 100, 1), Rename(100, "H"))]
    hs = t.find("High School")
    first = t.kids[hs][0]
    inverses.append(model.apply(Move(first, hs, len(t.kids[hs]) - 1)))  # to the end of its own group
    assert t.kids[hs][-1] == first
    for inverse in reversed(inverses):
        model.apply(inverse)
    assert 100 not in t and t.row(first) == 0
    model.apply(Remove(t.find("Doctorate")))


def test_group_drag_rename_delete_undo_redo(editor, qtbot):
    tree, model = editor.tree(), editor.model
    emitted = []
    editor.taxonomyChanged.connect(lambda column, tax: emitted.append((column, tax.to_paths())))
    history = [paths(editor)]

    group = editor.new_group("Degrees", parent=0, edit=False)
    assert tree.is_group(group) and tree.parent[group] == 0
    history.append(paths(editor))
    assert sorted(history[1]) == sorted(history[0])  # an empty group is left out of the taxonomy

    # drag Bachelors and Masters onto the new group, as the view does it: mimeData then dropMimeData
    drag = [model.index_of(tree.find("Bachelors")), model.index_of(tree.find("Masters"))]
    mime = model.mimeData(drag)
    target = model.index_of(group)
    assert model.canDropMimeData(mime, QtCore.Qt.DropAction.MoveAction, -1, 0, target)
    assert not model.canDropMimeData(mime, QtCore.Qt.DropAction.MoveAction, -1, 0,
                                     model.index_of(tree.find("Doctorate")))  # not into a value
    assert model.dropMimeData(mime, QtCore.Qt.DropAction.MoveAction, -1, 0, target)
    tax = editor.taxonomy()
    assert parent_label(tax, "Bachelors") == parent_label(tax, "Masters") == "Degrees"
    assert tax.parent(tax.parent(tax.leaf_node("Masters"))) == 0
    history.append(paths(editor))

    assert editor.rename(group, "University degrees")
    assert parent_label(editor.taxonomy(), "Masters") == "University degrees"
    history.append(paths(editor))

    graduate = tree.find("Graduate")  # Masters left it: Doctorate remains
    assert editor.delete_nodes([graduate])
    tax = editor.taxonomy()
    assert parent_label(tax, "Doctorate") == "Higher education"
    assert "Graduate" not in labels(tax)
    history.append(paths(editor))
    assert emitted[-1] == ("education", history[-1])

    for state in reversed(history[:-1]):
        editor.undo_stack.undo()
        assert paths(editor) == state
    assert emitted[-1] == ("education", history[0])
    qtbot.wait(0)
    for state in history[1:]:
        editor.undo_stack.redo()
        assert paths(editor) == state
    assert len(emitted) == 3 * (len(history) - 1)  # every edit, undo and redo


def test_move_rows_and_reorder(editor):
    tree, model = editor.tree(), editor.model
    hs = tree.find("High School")
    kids = [tree.labels[k] for k in tree.kids[hs]]
    before = paths(editor)
    # move the first two values of "High School" to "Primary education" (Qt convention for destination rows)
    assert model.moveRows(model.index_of(hs), 0, 2, model.index_of(tree.find("Primary education")), 0)
    tax = editor.taxonomy()
    assert [parent_label(tax, v) for v in kids[:2]] == ["Primary education"] * 2
    assert tree.kids[tree.find("Primary education")][:2] == [tree.find(kids[0]), tree.find(kids[1])]
    editor.undo_stack.undo()
    assert paths(editor) == before
    # reordering inside a group: the last value dropped before the first
    last = tree.kids[hs][-1]
    assert editor.move_nodes([last], hs, 0)
    assert tree.kids[hs][0] == last
    editor.undo_stack.undo()
    assert paths(editor) == before


def test_refused_edits_leave_no_command(editor):
    tree = editor.tree()
    count = editor.undo_stack.count()
    higher = tree.find("Higher education")
    assert not editor.move_nodes([higher], tree.find("Undergraduate"))  # into its own child
    assert not editor.rename(tree.find("Masters"), "MSc")  # values keep the data's spelling
    assert not editor.rename(higher, "Secondary education")  # sibling with that name exists
    assert "already holds" in editor.message_label.text()
    assert not editor.delete_nodes([0])
    assert editor.undo_stack.count() == count


def test_insert_level_above_siblings(editor):
    tree = editor.tree()
    before = paths(editor)
    height = editor.taxonomy().height
    under = tree.find("Undergraduate")
    nodes = list(tree.kids[under])
    editor.view.selectionModel().clearSelection()
    for node in nodes:
        editor.view.selectionModel().select(editor.model.index_of(node),
                                            QtCore.QItemSelectionModel.SelectionFlag.Select
                                            | QtCore.QItemSelectionModel.SelectionFlag.Rows)
    assert editor.selected_nodes() == nodes
    group = editor.insert_level(label="College", edit=False)
    tax = editor.taxonomy()
    assert tree.kids[under] == [group] and tree.kids[group] == nodes
    assert parent_label(tax, "Bachelors") == "College" and tax.height == height + 1
    editor.undo_stack.undo()
    assert paths(editor) == before


def test_keyboard_cut_paste_and_shortcuts(editor, qtbot):
    editor.show()
    qtbot.waitExposed(editor)
    tree = editor.tree()
    before = paths(editor)
    editor._select(tree.find("Preschool"))
    editor.cut_action.trigger()
    editor._select(tree.find("High School"))
    editor.paste_action.trigger()
    assert parent_label(editor.taxonomy(), "Preschool") == "High School"
    with qtbot.waitActive(editor):
        editor.activateWindow()
    editor.view.setFocus()
    qtbot.keyClick(editor.view, QtCore.Qt.Key.Key_Z, QtCore.Qt.KeyboardModifier.ControlModifier)
    assert paths(editor) == before
    qtbot.keyClick(editor.view, QtCore.Qt.Key.Key_Z,
                   QtCore.Qt.KeyboardModifier.ControlModifier | QtCore.Qt.KeyboardModifier.ShiftModifier)
    assert parent_label(editor.taxonomy(), "Preschool") == "High School"
    for action in (editor.undo_action, editor.redo_action, editor.new_group_action, editor.delete_action):
        assert action.toolTip() and not action.shortcut().isEmpty()
    for button in editor.buttons.values():
        assert button.accessibleName()
    editor.grab().save("/tmp/taxonomy_editor.png")


def test_coverage_lists_missing_value_and_fix(qtbot, adult, arx):
    editor = TaxonomyEditor()
    qtbot.addWidget(editor)
    values = adult["education"].copy()
    values.iloc[:3] = "Kindergarten"
    editor.set_column("education", Taxonomy.flat("education", ["Masters"]), values)
    editor.import_arx(arx("education"))
    assert editor.coverage().missing == ["Kindergarten"]
    texts = [editor.coverage_panel.list.item(i).text() for i in range(editor.coverage_panel.list.count())]
    assert any("Kindergarten" in t and "not in the tree" in t for t in texts)
    assert "1 value" in editor.coverage_panel.summary_label.text()
    assert editor.add_missing_values()
    assert editor.taxonomy().has_value("Kindergarten") and editor.coverage().missing == []
    editor.undo_stack.undo()
    assert editor.coverage().missing == ["Kindergarten"]
    # the reverse: a value of the tree that the data lacks
    editor.set_column("education", editor.taxonomy(), values[values != "Doctorate"])
    assert "Doctorate" in editor.coverage().unused


def test_interval_preview_follows_width_and_applies(qtbot, adult):
    editor = TaxonomyEditor()
    qtbot.addWidget(editor)
    ages = adult["age"]
    emitted = []
    editor.taxonomyChanged.connect(lambda c, t: emitted.append(t))
    editor.set_column("age", None, ages)
    builder = editor.builder
    assert not builder.isHidden()
    builder.width_spin.setValue(10)
    builder.preview_now()
    wide = builder.preview()
    builder.width_spin.setValue(5)
    qtbot.waitUntil(lambda: builder.preview() is not None and builder.preview() is not wide, timeout=2000)
    narrow = builder.preview()
    assert len(narrow.nodes_at_level(1)) > len(wide.nodes_at_level(1))
    assert set(narrow.leaf_values()) == set(ages.unique())
    flat = paths(editor)
    builder.apply_button.click()
    assert paths(editor) == narrow.to_paths() and emitted[-1].to_paths() == narrow.to_paths()
    editor.undo_stack.undo()
    assert paths(editor) == flat


def test_interval_builder_hidden_for_text(editor):
    assert editor.builder.isHidden()


def test_arx_export_and_import_through_dialogs(editor, tmp_path, arx):
    out = tmp_path / "education.csv"
    editor.save_dialog = lambda *_a: str(out)
    editor.export_action.trigger()
    def rows(path):
        return [line.split(";") for line in path.read_text().splitlines() if line]

    assert rows(out) == rows(arx("education"))  # unchanged import: written back in the file's order
    editor.rename(editor.tree().find("Graduate"), "Postgraduate")
    assert editor.export_arx(out) == out
    editor.open_dialog = lambda *_a: str(out)
    editor.set_column("education", Taxonomy.flat("education", ["x"]))
    editor.import_action.trigger()
    assert parent_label(editor.taxonomy(), "Masters") == "Postgraduate"
    errors = []
    editor.error_handler = lambda _w, title, msg: errors.append(title)
    bad = tmp_path / "bad.csv"
    bad.write_text("a;x\nb;y\n")  # two roots
    assert not editor.import_arx(bad)
    assert errors == ["Could not import the hierarchy"]


def test_large_flat_taxonomy_is_fast_enough_to_edit(qtbot):
    editor = TaxonomyEditor()
    qtbot.addWidget(editor)
    values = pd.Series([f"code{i:05d}" for i in range(5000)])
    editor.set_column("diagnosis", None, values)
    group = editor.new_group("First hundred", parent=0, edit=False)
    nodes = editor.tree().kids[0][:100]
    assert editor.move_nodes(nodes, group)
    assert editor.taxonomy().leaf_count(editor.taxonomy().children(0)[-1]) == 100
    editor.undo_stack.undo()
    assert editor.tree().kids[group] == []


def test_both_interval_builders_start_at_the_engine_default_width(qtbot, adult):
    """One default width (engine DEFAULT_INTERVAL_WIDTH) for the editor's builder, unless absurd for the range."""
    from ppdp_gui.engine.taxonomy import DEFAULT_INTERVAL_WIDTH
    editor = TaxonomyEditor()
    qtbot.addWidget(editor)
    editor.set_column("age", None, adult["age"])  # 17 to 90: 8 intervals of 10
    assert editor.builder.width_spin.value() == DEFAULT_INTERVAL_WIDTH
    editor.set_column("fnlwgt", None, pd.to_numeric(adult["age"]) * 10_000)  # 73,000 intervals of 10: no
    assert editor.builder.width_spin.value() == 100_000
