"""``python -m bench curve`` end to end at two tiny sizes, and its parts on known data.

The end-to-end run is the real thing at a small scale: the scale generator on a made-up
corpora folder, every step in a measured child process (a real Whoosh index with its sidecars,
FTS5, the query runs, the search bundle), node for the bundle's bytes. Timings are never
checked, only that every measure is there, positive, fitted and drawn.
"""

from __future__ import annotations

import json
import math
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy
import pytest

from bench import curve

from support.fake_corpora import write_news

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the scale generator reads: BBC-style text files and Reuters SGML."""
    return write_news(tmp_path_factory.mktemp("corpora"), bbc_files=10, reuters_files=1,
                      stories_per_file=12)


def test_growth_exponent_on_known_data() -> None:
    sizes = [300, 900, 2700, 8100]
    assert curve.growth_exponent(sizes, [5 * n ** 1.5 for n in sizes]) == pytest.approx(1.5)
    assert curve.growth_exponent(sizes, [2 * n for n in sizes]) == pytest.approx(1.0)
    assert curve.growth_exponent(sizes, [7.0] * 4) == pytest.approx(0.0)
    noisy = [n * f for n, f in zip(sizes, (1.0, 1.3, 0.8, 1.1))]
    slope = numpy.polyfit(numpy.log(sizes), numpy.log(noisy), 1)[0]  # least squares, not ends
    assert curve.growth_exponent(sizes, noisy) == pytest.approx(slope)
    assert slope != pytest.approx(math.log(noisy[-1] / noisy[0]) / math.log(sizes[-1] / sizes[0]))
    assert curve.growth_exponent([300], [1.0]) is None
    assert curve.growth_exponent([300, 900], [None, 3.0]) is None   # one usable point


def test_only_own_measures_above_the_limit_are_flagged() -> None:
    sizes = (1_000, 10_000)
    growth = {m.key: 1.0 for m in curve.MEASURES}
    growth.update(build_s=1.2, index_mb=curve.LINEAR_LIMIT - 0.01, fts5_p95_ms=2.0)
    points = [{"articles": n, **{k: 3.0 * n ** e for k, e in growth.items()}} for n in sizes]
    rows = {r["key"]: r for r in curve.fits(points)}
    assert [k for k, r in rows.items() if r["worse_than_linear"]] == ["build_s"]
    assert rows["fts5_p95_ms"]["exponent"] == pytest.approx(2.0)   # a peer: shown, not flagged
    assert rows["index_mb"]["exponent"] == pytest.approx(curve.LINEAR_LIMIT - 0.01, abs=1e-3)


def test_sizes_are_read_like_a_person_writes_them() -> None:
    assert curve.parse_sizes("100000,10k, 1M,10000") == [10_000, 100_000, 1_000_000]
    with pytest.raises(ValueError, match="not a number"):
        curve.parse_sizes("10k,lots")


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node (bytes per first query)")
def test_curve_at_two_tiny_sizes(corpora: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    from bench.__main__ import main

    chart = tmp_path / "curve.svg"
    assert main(["--corpora", str(corpora), "--data", str(tmp_path / "data"),
                 "--results", str(tmp_path / "results"), "curve", "--sizes", "900,300",
                 "--per-file", "100", "--per-kind", "2", "--first-queries", "12",
                 "--svg", str(chart)]) == 0
    out = capsys.readouterr().out
    result = json.loads((tmp_path / "results" / "curve.json").read_text("utf-8"))

    points = result["points"]
    assert [p["articles"] for p in points] == [300, 900] == [p["indexed"] for p in points]
    assert all(p["queries"] == 10 and p["first_queries"] == 12 for p in points)
    assert points[1]["index_mb"] > points[0]["index_mb"]
    assert all(p["index_mb"] > p["sidecar_mb"] > 0 and p["build_procs"] == 2 for p in points)

    # the table: a row per measure, a column per size, the exponent of each
    rows = result["rows"]
    assert [r["key"] for r in rows] == [m.key for m in curve.MEASURES]
    for row in rows:
        assert all(isinstance(v, (int, float)) and v > 0 for v in row["values"]), row
        assert row["exponent"] == pytest.approx(
            curve.growth_exponent([300, 900], row["values"]), abs=1e-3)
    printed = out.splitlines()
    start = next(i for i, line in enumerate(printed) if line.startswith("measure"))
    head, rule, *lines = printed[start:]
    assert head.split()[-3:] == ["300", "900", "exponent"]
    for m in curve.MEASURES:
        assert any(line.startswith(m.label) for line in lines), m.label
    assert result["worse_than_linear"] == [r["measure"] for r in rows if r["worse_than_linear"]]

    # the chart: XML, one series per measure, a point per size
    root = ET.parse(chart).getroot()
    series = root.findall(f".//{SVG}g[@class='series']")
    assert [g.get("data-measure") for g in series] == [m.key for m in curve.MEASURES]
    for g in series:
        assert len(g.find(f"{SVG}polyline").get("points").split()) == 2
        assert len(g.findall(f"{SVG}circle")) == 2

    # --redraw draws the same chart from the saved points, measuring nothing
    environment = result["environment"]
    again = tmp_path / "again.svg"
    assert main(["--results", str(tmp_path / "results"), "curve", "--redraw",
                 "--svg", str(again)]) == 0
    assert again.read_text("utf-8") == chart.read_text("utf-8")
    redrawn = json.loads((tmp_path / "results" / "curve.json").read_text("utf-8"))
    assert redrawn["environment"] == environment and redrawn["points"] == points

    # a second run reuses the generated sets
    stamp = tmp_path / "data" / "curve" / "300" / "articles" / "scale-00000.jsonl"
    before = stamp.stat().st_mtime_ns
    folder, made = curve.articles_for(corpora, tmp_path / "data", 300, 5, 100)
    assert not made and stamp.stat().st_mtime_ns == before
    assert len(list(folder.glob("*.jsonl"))) == 3
    _, made = curve.articles_for(corpora, tmp_path / "data", 300, 6, 100)   # another seed
    assert made
