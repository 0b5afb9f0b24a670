"""The parameter panel is drawn from ParamSpecs alone: right editor per kind, log sliders, column filters,
values the mechanism accepts, help as tooltips."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QListWidget

from ppdp_gui.engine.data.reader import dataset_from_frame
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.mechanisms.base import Mechanism, ParamSpec, PrivacyCost
from ppdp_gui.gui.widgets.param_panel import NumberField, ParamPanel


class Toy(Mechanism):
    name = "Toy"
    guarantee = "ε-DP"
    params = (
        ParamSpec("epsilon", "ε", "float", default=1.0, low=0.01, high=10.0, log_scale=True, help="Privacy loss."),
        ParamSpec("share", "Share", "float", default=0.5, low=0.0, high=1.0, help="A fraction."),
        ParamSpec("k", "k", "int", default=10, low=2, high=100, help="Group size."),
        ParamSpec("steps", "Steps", "int", default=3, help="Unbounded integer."),
        ParamSpec("how", "How", "choice", default="b", choices=("a", "b", "c")),
        ParamSpec("post", "Post-process", "bool", default=True),
        ParamSpec("target", "Class column", "column", roles=(Role.CLASS,), help="What to predict."),
        ParamSpec("nums", "Numbers", "columns", default=("age",), column_kind="numeric"),
        ParamSpec("sens", "Sensitive", "column", roles=(Role.SENSITIVE,), optional=True),
        ParamSpec("low", "Lower bound", "float", default=None, optional=True, help="Public bound."),
    )

    def cost(self, params):
        return PrivacyCost(epsilon=params["epsilon"])


@pytest.fixture
def data():
    frame = pd.DataFrame({"age": [30, 40, 50] * 4, "hours": [10, 20, 30] * 4, "sex": ["F", "M", "F"] * 4,
                          "income": ["<=50K", ">50K", "<=50K"] * 4})
    return dataset_from_frame(frame, roles={"age": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER,
                                            "hours": Role.INSENSITIVE, "income": Role.CLASS},
                              kinds={"age": "numeric", "hours": "numeric", "sex": "categorical",
                                     "income": "categorical"})


@pytest.fixture
def panel(qtbot, data):
    p = ParamPanel(Toy.params, data)
    qtbot.addWidget(p)
    return p


def test_editor_per_kind_and_help_as_tooltip(panel):
    assert isinstance(panel.editor("epsilon"), NumberField) and panel.editor("epsilon").slider is not None
    assert panel.editor("steps").slider is None  # unbounded: typed box only
    assert isinstance(panel.editor("how"), QComboBox) and isinstance(panel.editor("post"), QCheckBox)
    assert isinstance(panel.editor("target"), QComboBox) and isinstance(panel.editor("nums"), QListWidget)
    assert panel.editor("epsilon").toolTip() == "Privacy loss."
    assert panel.editor("k").accessibleName() == "k"


def test_defaults_are_values_the_mechanism_accepts(panel, data):
    values = panel.values()
    assert values["epsilon"] == pytest.approx(1.0) and values["k"] == 10 and values["how"] == "b"
    assert values["post"] is True and values["target"] == "income" and values["nums"] == ("age",)
    assert values["sens"] is None  # optional, no sensitive column
    assert values["low"] is None  # optional number: not given unless ticked
    assert Toy().validate(data, **values) == []


def test_log_slider_maps_on_log10(panel, qtbot):
    field = panel.editor("epsilon")
    with qtbot.waitSignal(panel.changed):
        field.slider.setValue(500)  # half way on log10(0.01)..log10(10) is 10**-0.5
    assert panel.values()["epsilon"] == pytest.approx(10 ** -0.5, rel=0.01)
    field.slider.setValue(0)
    assert panel.values()["epsilon"] == pytest.approx(0.01)
    field.slider.setValue(1000)
    assert panel.values()["epsilon"] == pytest.approx(10.0)
    field.setValue(0.1)  # typing moves the slider to a third of the way
    assert field.slider.value() == pytest.approx(1000 / 3, abs=1)
    lin = panel.editor("share")
    lin.slider.setValue(250)
    assert panel.values()["share"] == pytest.approx(0.25)


def test_column_pickers_follow_roles_and_kinds(panel, data):
    assert Toy.param("target").allowed_columns(data) == ["income"]
    nums = panel.editor("nums")
    assert [nums.item(i).text() for i in range(nums.count())] == ["age", "hours"]
    nums.item(1).setCheckState(Qt.Checked)
    assert panel.values()["nums"] == ("age", "hours")
    # a column losing its role disappears from the picker; the hint says what to do
    panel.set_dataset(data.with_roles({"income": Role.INSENSITIVE}))
    assert panel.values()["target"] == ""
    assert any("Class column" in h and "Data step" in h for h in panel.empty_column_hints())


def test_set_values_round_trip(panel):
    wanted = {"epsilon": 0.5, "share": 0.75, "k": 42, "steps": 7, "how": "c", "post": False, "target": "income",
              "nums": ("hours",), "sens": None, "low": -3.5}
    panel.set_values(wanted)
    got = panel.values()
    assert got["epsilon"] == pytest.approx(0.5) and got["share"] == pytest.approx(0.75)
    assert {k: v for k, v in got.items() if k not in ("epsilon", "share")} == \
        {k: v for k, v in wanted.items() if k not in ("epsilon", "share")}
    assert math.isclose(Toy.resolve_params(**got)["epsilon"], 0.5)


def test_optional_number_is_none_until_ticked(panel):
    field = panel.editor("low")
    assert field.use is not None and not field.box.isEnabled()
    field.use.setChecked(True)
    field.box.setValue(12.5)
    assert panel.values()["low"] == pytest.approx(12.5)
    field.use.setChecked(False)
    assert panel.values()["low"] is None


def test_a_value_below_the_range_is_kept_and_flagged_not_replaced(panel, qtbot):
    field = panel.editor("epsilon")
    field.box.setFocus()
    field.box.selectAll()
    qtbot.keyClicks(field.box, "0")
    qtbot.keyClick(field.box, Qt.Key_Return)
    assert panel.values()["epsilon"] == 0  # what was typed, not 1 and not the minimum
    problem = panel.findChild(type(panel._problems["epsilon"]), "problem_epsilon")
    assert problem.isVisibleTo(panel) and "below the smallest allowed value, 0.01" in problem.text()
    assert panel.problems() == {"epsilon": field.problem()} and field.box.accessibleDescription()
    with pytest.raises(Exception, match="below the smallest allowed value, 0.01"):  # the same words
        Toy.resolve_params(**panel.values())  # the plan refuses it, so nothing can run
    qtbot.keyClick(field.box, Qt.Key_Up)  # the arrows lead back into the range
    assert panel.values()["epsilon"] >= 0.01 and not problem.isVisibleTo(panel) and panel.problems() == {}
    field.setValue(20)  # above the range: flagged too
    assert "above the largest allowed value, 10" in problem.text() and problem.isVisibleTo(panel)
    field.slider.setValue(500)  # the slider only offers values in the range
    assert not problem.isVisibleTo(panel)


def test_tooltips_carry_the_formula(qtbot):
    spec = ParamSpec("epsilon", "ε", "float", default=1.0, low=0.01, high=10.0, help="Privacy loss.",
                     formula="noise of scale 1/ε")
    p = ParamPanel((spec,))
    qtbot.addWidget(p)
    assert p.editor("epsilon").toolTip().startswith("Privacy loss.") and "noise of scale 1/ε" in \
        p.editor("epsilon").toolTip()
