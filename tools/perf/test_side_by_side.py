"""The side-by-side runner's report: minima, medians and their ratios as
the table states them, and compare's verdict read from its --json
document (the timing itself needs torch and ONNX Runtime and is not run
here)."""

from __future__ import annotations

import side_by_side as s


def test_row_cells() -> None:
    r = s.Row("resnet18", 64, ort=[0.004, 0.002, 0.003], tlcheck=[9.0, 6.0, 12.0],
              rss=512 * 2**20, verdict="holds (1000/0/0)",
              ort_cpu=[0.008, 0.004, 0.005], tlcheck_cpu=[5.0, 4.0, 7.5])
    # ORT min 2 ms, median 3 ms; compare min 6 s, median 9 s;
    # medians 9/0.003 = 3000, minima 6/0.002 = 3000; CPU: ORT min 4 ms,
    # median 5 ms, compare min 4 s, median 5 s, medians 5/0.005 = 1000.
    assert r.cells() == ["resnet18 1×3×64×64", "2.0 / 3.0 ms", "6.00 / 9.00 s",
                         "3000× / 3000×", "4.0 / 5.0 ms", "4.00 / 5.00 s", "1000×",
                         "512 MiB", "holds (1000/0/0)"]


def test_table_shape() -> None:
    r = s.Row("squeezenet", 32, [1e-3] * 3, [1.0] * 3, 2**20, "fails (1/2/3)", [2e-3] * 3, [1.5] * 3)
    lines = s.table([r, r]).splitlines()
    assert len(lines) == 4
    assert all(line.count("|") == len(s.HEADER) + 1 for line in lines)


def test_verdict() -> None:
    doc = {"verdict": "fails", "holds": 998, "fails": 2, "inconclusive": 0}
    assert s.verdict(doc) == "fails (998/2/0)"
    assert s.verdict({}) == "? (?/?/?)"
