"""The shared datasets exactly as the reference run of the original C++ KRIMP read them (../shared/reference,
section 1), as ItemTables, with the reference's figures to print beside ours."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ppdp_gui.engine.mechanisms.krimp.encoding import ItemTable, encode_frame, read_num

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"

# name -> (candidates, min_sup, rows, items, candidates incl. singletons, L(D|ST), L(D,ST), L(D,CT), L%, |CT|, s)
REFERENCE = {
    "chess": ("all", 1, 28056, 58, 373421, 1083046.4608, 1083791.4365, 667629.7816, 61.60, 1684, 6.22),
    "iris": ("all", 1, 150, 19, 543, 3058.4055, 3230.7419, 1474.9688, 45.65, 13, 0.005),
    "led7": ("all", 1, 3200, 24, 15484, 107076.4136, 107318.7375, 31105.0010, 28.98, 154, 0.03),
    "mushroom": ("closed", 20, 8124, 90, 101282, 1074385.2199, 1075760.8229, 249225.4656, 23.17, 208, 0.23),
    "mushroom-raw": ("closed", 20, 8124, 119, 109304, 1111287.3610, 1113311.5815, 277930.6898, 24.96, 202, 0.23),
    "nursery": ("all", 1, 12960, 32, 307591, 569042.4832, 569388.2853, 255384.7546, 44.85, 316, 1.48),
    "pima": ("all", 1, 768, 38, 28845, 26250.1003, 26821.8093, 9143.2009, 34.09, 58, 0.01),
    "adult": ("closed", 300, 30162, 109, 7074, 1349773.8788, 1351866.1980, 759611.8839, 56.19, 482, 0.30),
}
QUICK = ("iris", "led7", "pima")  # small enough for the test suite


def _csv(path: Path, **kw) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False, **kw)


def frame(name: str) -> pd.DataFrame | None:
    """The raw table behind `name` (None for the LUCS transaction files)."""
    if name == "chess":
        return _csv(SHARED / "chess_krvk" / "krkopt.csv.gz")
    if name == "led7":
        return _csv(SHARED / "led7" / "led7.csv")
    if name == "nursery":
        return _csv(SHARED / "nursery" / "nursery.csv.gz")
    if name == "mushroom-raw":
        return _csv(SHARED / "mushroom" / "agaricus-lepiota.csv.gz")
    if name == "adult":
        df = _csv(SHARED / "adult" / "hierarchies" / "arx" / "adult.csv.gz", sep=";")
        h = _csv(SHARED / "adult" / "hierarchies" / "arx" / "adult_hierarchy_age.csv", sep=";", header=None)
        df["age"] = df["age"].map(dict(zip(h[0], h[1])))
        return df
    return None


def load(name: str) -> ItemTable:
    if name == "iris":
        return read_num(SHARED / "iris" / "lucs_kdd" / "iris.D19.N150.C3.reconstructed.num")
    if name == "pima":
        return read_num(SHARED / "pima" / "lucs_kdd" / "pima.D38.N768.C2.num")
    if name == "mushroom":
        return read_num(SHARED / "mushroom" / "lucs_kdd" / "mushroom.D90.N8124.C2.num.gz")
    return encode_frame(frame(name))
