"""Hostile inputs, round three (issue 28): each finding as a test, on both engines where it applies.

1. special files (a FIFO as the table, a hierarchy, a project or a project's source) are refused at once;
2. small files that stand for a lot of memory are refused before their values are made;
3. a Parquet fixed-size binary column loads (it was an AttributeError);
4. the large-table engine makes the reader's pre-read checks (gzip bomb, NUL byte, ragged lines);
5. the release note is in place before the table it describes.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ppdp_gui.engine.data import read_table
from ppdp_gui.engine.errors import DataError, PpdpError, TaxonomyError

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
REPO = Path(__file__).resolve().parents[2]
GOOD = "age,sex,zip\n" + "".join(f"{20 + i % 50},{'FM'[i % 2]},{2100 + i % 7}\n" for i in range(60))


def _within(seconds: float, call):
    """call() in a thread; its result or exception, or a failure if it is still running after `seconds` (a FIFO
    opened for reading with no writer waits forever: the test must fail, not hang)."""
    box: dict = {}

    def target():
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box.get("value")


# ---- 1. only regular files -------------------------------------------------------------------------------------
@needs_fifo
@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_fifo_as_the_table_is_refused_at_once(tmp_path, engine):
    fifo = tmp_path / "ward.csv"
    os.mkfifo(fifo)
    if engine == "duckdb":
        from ppdp_gui.engine.bigdata.large_dataset import open_large
        call = lambda: open_large(fifo, hashes=False)  # noqa: E731
    else:
        call = lambda: read_table(fifo)  # noqa: E731
    with pytest.raises(DataError, match="FIFO") as err:
        _within(20, call)
    assert "ward.csv" in str(err.value)


@needs_fifo
def test_a_fifo_as_hierarchy_project_or_project_source_is_refused_at_once(tmp_path):
    from ppdp_gui.engine.persistence.project import read_recipe
    from ppdp_gui.engine.pipeline.load import load
    from ppdp_gui.engine.taxonomy.arx_io import read_arx_hierarchy
    hierarchy, project, source = tmp_path / "h.csv", tmp_path / "p.ppdp.json", tmp_path / "t.csv"
    for fifo in (hierarchy, project, source):
        os.mkfifo(fifo)
    with pytest.raises(TaxonomyError, match="FIFO"):
        _within(20, lambda: read_arx_hierarchy(hierarchy, "x"))
    with pytest.raises(DataError, match="FIFO"):
        _within(20, lambda: read_recipe(project))
    real = tmp_path / "real.ppdp.json"
    real.write_text(json.dumps({"schema_version": 2, "source": {"path": str(source)}}))
    with pytest.raises(DataError, match="FIFO"):
        _within(20, lambda: load(read_recipe(real)))


def test_folders_and_devices_are_refused(tmp_path):
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    with pytest.raises(DataError, match="folder"):
        read_table(folder)
    if os.path.exists("/dev/zero"):
        device = tmp_path / "zero.csv"
        device.symlink_to("/dev/zero")
        with pytest.raises(DataError, match="device"):
            _within(20, lambda: read_table(device))


@needs_fifo
@pytest.mark.parametrize("command", ["inspect", "run"])
def test_ppdp_on_a_fifo_is_one_line_not_a_hang(tmp_path, command):
    fifo = tmp_path / "pipe.parquet"  # `run` reads a Parquet footer to choose its engine
    os.mkfifo(fifo)
    args = [str(fifo)] if command == "inspect" else ["Mondrian", "--input", str(fifo), "--output",
                                                      str(tmp_path / "out.csv"), "-p", "k=2"]
    done = subprocess.run([sys.executable, "-m", "ppdp_gui.cli", command, *args], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO),
                                                PPDP_LEDGER=str(tmp_path / "ledger.sqlite")))
    assert done.returncode != 0 and "FIFO" in done.stderr and "Traceback" not in done.stderr


# ---- 2. budgets before materialising ---------------------------------------------------------------------------
def _corpus():
    import importlib.util
    spec = importlib.util.spec_from_file_location("hostile_corpus", Path(__file__).with_name("hostile_corpus.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("hostile_corpus", module)
    spec.loader.exec_module(module)
    return module


def test_one_shared_string_copied_into_many_cells_is_refused_before_it_is_copied(tmp_path):
    c = _corpus()
    big = "x" * (2 << 20)
    cells = b"".join(c._row(r, ['<c r="A%d" t="s"><v>0</v></c>' % r]) for r in range(2, 202))
    path = tmp_path / "notes.xlsx"
    path.write_bytes(c.xlsx([c._row(1, [c._s("A1", "note")]) + cells], shared=f"<si><t>{big}</t></si>".encode(),
                            level=9))
    assert path.stat().st_size < 100_000
    before = pa.total_allocated_bytes()
    with pytest.raises(DataError, match="PPDP_MAX_EXPANDED_MB") as err:
        read_table(path)
    assert "shared strings" in str(err.value)
    assert pa.total_allocated_bytes() - before < 64 << 20


def test_parquet_sizes_are_checked_from_the_footer_before_any_page_is_read(tmp_path, monkeypatch):
    strings = pa.array([chr(65 + i % 26) * (1 << 20) + str(i) for i in range(160)])
    path = tmp_path / "text.parquet"
    pq.write_table(pa.table({"t": strings}), path, compression="zstd")
    del strings

    def no_read(*_a, **_k):
        raise AssertionError("a data page was read")
    monkeypatch.setattr(pq.ParquetFile, "read", no_read)
    monkeypatch.setattr(pq.ParquetFile, "read_row_group", no_read)
    with pytest.raises(DataError, match="declare"):
        read_table(path)


def test_a_hierarchy_too_deep_is_refused_naming_the_limit_and_deep_ones_build_in_linear_time(tmp_path):
    from ppdp_gui.engine.taxonomy.arx_io import read_arx_hierarchy
    path = tmp_path / "deep.csv"
    path.write_text(";".join(["flu"] + [f"level{i}" for i in range(5000)] + ["*"]) + "\n")
    with pytest.raises(TaxonomyError, match="PPDP_MAX_HIERARCHY_LEVELS"):
        read_arx_hierarchy(path, "d")
    import tracemalloc

    from ppdp_gui.engine.taxonomy.tree import Taxonomy
    depth = 8_000  # a tree built in code has no file limit: keys holding whole paths made this quadratic (256 MB)
    row = ["v"] + [f"g{i}" for i in range(depth)] + ["*"]
    tracemalloc.start()
    try:
        tax = Taxonomy.from_paths("d", [row])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(tax) == depth + 2 and tax.height == depth + 1
    assert peak < 32 << 20, f"{peak / 2**20:.0f} MB to build a tree of {depth:,} levels"


def test_hierarchy_labels_are_limited_and_the_limit_can_be_raised(tmp_path, monkeypatch):
    from ppdp_gui.engine.taxonomy.arx_io import read_arx_hierarchy
    path = tmp_path / "wide.csv"
    path.write_text("".join(f"v{i};g{i % 10};*\n" for i in range(600)))
    monkeypatch.setenv("PPDP_MAX_HIERARCHY_CELLS", "1000")
    with pytest.raises(TaxonomyError, match="PPDP_MAX_HIERARCHY_CELLS"):
        read_arx_hierarchy(path, "w")
    monkeypatch.setenv("PPDP_MAX_HIERARCHY_CELLS", "2000")
    assert len(read_arx_hierarchy(path, "w").leaves()) == 600


def test_project_nesting_is_measured_before_the_json_is_parsed(tmp_path, monkeypatch):
    from ppdp_gui.engine.persistence import project
    path = tmp_path / "deep.ppdp.json"
    path.write_bytes(b"[" * 200_000 + b"]" * 200_000)
    monkeypatch.setattr(project.json, "loads", lambda *_a, **_k: pytest.fail("the JSON was parsed"))
    with pytest.raises(DataError, match="nested 200,000 levels"):
        project.read_recipe(path)


def test_brackets_inside_project_strings_do_not_count_as_nesting(tmp_path):
    from ppdp_gui.engine.persistence.project import read_recipe
    table = tmp_path / "t.csv"
    table.write_text(GOOD)
    path = tmp_path / "p.ppdp.json"
    path.write_text(json.dumps({"schema_version": 2, "source": {"path": str(table)},
                                "releases": [{"note": '[{"\\' * 3000}]}))
    assert read_recipe(path).releases[0]["note"].startswith('[{"')


# ---- 3. tracebacks ---------------------------------------------------------------------------------------------
def test_a_parquet_fixed_size_binary_column_loads(tmp_path):
    path = tmp_path / "codes.parquet"
    pq.write_table(pa.table({"id": [1, 2, 3], "code": pa.array([b"ab", b"cd", b"ef"], pa.binary(2))}), path)
    assert read_table(path).frame["code"].tolist() == ["ab", "cd", "ef"]


# ---- 4. one set of guards for both engines --------------------------------------------------------------------
def _gzip_bomb(path: Path, megabytes: int) -> None:
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [comp.compress(b"a,b\n")] + [comp.compress(b"1,2\n" * 262_144) for _ in range(megabytes)]
    path.write_bytes(b"".join(parts) + comp.flush())


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize("case", ["gzip bomb", "NUL byte", "ragged line", "latin-1", "look-alike names"])
def test_the_large_table_engine_refuses_what_the_reader_refuses(tmp_path, engine, case):
    path = tmp_path / ("t.csv.gz" if case == "gzip bomb" else "t.csv")
    if case == "gzip bomb":
        _gzip_bomb(path, 300)
    else:
        path.write_bytes({"NUL byte": b"a,b\n1,\x002\n3,4\n", "ragged line": b"a,b\n1,2\n3,4,5\n6,7\n",
                          "latin-1": b"a,b\n1,K\xf6ln\n", "look-alike names": "age,\u0430ge\n1,2\n".encode()}[case])
    words = {"gzip bomb": "bomb", "NUL byte": "NUL", "ragged line": "line 3", "latin-1": "0xf6",
             "look-alike names": "looks the same"}[case]
    if engine == "duckdb":
        from ppdp_gui.engine.bigdata.large_dataset import open_large
        call = lambda: open_large(path, hashes=False)  # noqa: E731
    else:
        call = lambda: read_table(path)  # noqa: E731
    with pytest.raises(PpdpError) as err:
        _within(120, call)
    assert words in str(err.value) and "t.csv" in str(err.value)


def test_the_large_table_engine_reads_the_readers_header_and_a_long_cell(tmp_path):
    from ppdp_gui.engine.bigdata.large_dataset import open_large
    path = tmp_path / "t.csv"
    path.write_bytes(b" age , note \n" + b"".join(b"%d,%s\n" % (i, b"x" * (3 << 20) if i == 3 else b"n")
                                                   for i in range(30)))
    data = open_large(path, hashes=False)
    try:
        assert list(data.frame.columns) == list(read_table(path).frame.columns) == ["age", "note"]
        assert data.n_rows == 30
    finally:
        data.table.close()


# ---- 5. the note before the file -------------------------------------------------------------------------------
def test_the_release_note_is_in_place_before_the_table_is_renamed(tmp_path, monkeypatch):
    from ppdp_gui.engine.persistence.project import Recipe
    from ppdp_gui.engine.pipeline import plan, run_release
    from ppdp_gui.engine.pipeline.load import load
    from ppdp_gui.engine.pipeline.plan import resolve_mechanism
    from ppdp_gui.engine.privacy.ledger import Ledger
    export_module = importlib.import_module("ppdp_gui.engine.pipeline.export")

    table = tmp_path / "ward.csv"
    table.write_text(GOOD)
    data = load(Recipe(source=str(table))).dataset
    ledger = Ledger(tmp_path / "ledger.sqlite")
    published = [x for x in run_release(plan(data, resolve_mechanism("Mondrian"), {"k": 5}, ledger=ledger),
                                        ledger=ledger)][-1]
    out, note = tmp_path / "out.csv", tmp_path / "out.release-note.json"
    seen = []
    real_commit = export_module.commit

    def commit(staged, **kw):
        seen.append(note.exists())
        return real_commit(staged, **kw)
    monkeypatch.setattr(export_module, "commit", commit)
    export_module.export(published, out, note_path=note, ledger=ledger)
    assert seen == [True] and out.exists()
    assert json.loads(note.read_text())["files"][0]["file"] == "out.csv"

    def failing(staged, **kw):
        raise DataError("disk full", path=str(staged.target))
    monkeypatch.setattr(export_module, "commit", failing)
    out2, note2 = tmp_path / "out2.csv", tmp_path / "out2.release-note.json"
    with pytest.raises(DataError):
        export_module.export(published, out2, note_path=note2, ledger=ledger)
    assert not out2.exists() and not note2.exists()  # a note taken back when its table could not be put in place
