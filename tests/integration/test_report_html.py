"""The HTML report renders in a real headless Chromium with no console errors and no network."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from issuebench.analysis.html import report_html
from issuebench.analysis.report import report_from_paths

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")


def write_runs(root: Path) -> tuple[Path, Path]:
    """Three systems, reference layout, with costs in a predictions file."""
    preds = []
    for s, (name, resolved_every, cost) in enumerate([("agent-a", 2, 0.8), ("agent-b", 3, 0.1),
                                                        ("agent/c", 5, 0.5)]):
        for n in range(12):
            iid = f"{['octo__lib', 'acme__tool', 'zen__core'][n % 3]}-{n}"
            d = root / "runs" / name.replace("/", "__") / iid
            d.mkdir(parents=True)
            ok = n % resolved_every == 0
            ts = {"FAIL_TO_PASS": {"success": ["t"] if ok or n % 4 == 1 else [], "failure": [] if ok else ["u"]},
                  "PASS_TO_PASS": {"success": ["p"], "failure": [] if n % 3 else ["q"]}}
            if ok:
                ts["PASS_TO_PASS"]["failure"] = []
            body = {"patch_is_None": False, "patch_exists": True, "patch_successfully_applied": True,
                    "resolved": ok, "tests_status": ts}
            (d / "report.json").write_text(json.dumps({iid: body}))
            pred = {"instance_id": iid, "model_name_or_path": name, "model_patch": "x", "cost": cost + s / 100}
            if name == "agent-a":  # an agent's predictions carry its steps and how its run ended
                pred.update(steps=n + 1, exit_status="step_limit" if n == 11 else "submitted")
            preds.append(pred)
    p = root / "preds.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in preds) + "\n")
    return root / "runs", p


def chromium(args: list[str], tmp_path: Path, url: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
           "--enable-logging=stderr", "--v=0", *args, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def test_console_detector_sees_a_broken_page(tmp_path: Path):
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><script>console.error('boom'); nope();</script></body></html>")
    res = chromium(["--dump-dom"], tmp_path, bad.as_uri())
    assert any("boom" in line for line in console_lines(res.stderr))


def test_report_page_renders_cleanly(tmp_path: Path):
    runs, preds = write_runs(tmp_path)
    report = report_from_paths([runs], prediction_files=[preds])
    html = report_html(report)
    # Self-contained: no scripts, no external resources (the SVG namespace is an identifier, not a fetch).
    assert "<script" not in html
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", html)
    assert not re.findall(r"https?://(?!www\.w3\.org/2000/svg)", html)
    page = tmp_path / "report.html"
    page.write_text(html, encoding="utf-8")

    res = chromium(["--dump-dom"], tmp_path, page.as_uri())
    assert res.returncode == 0, res.stderr[-2000:]
    assert console_lines(res.stderr) == []
    dom = res.stdout
    assert dom.count("<svg") == 4  # rate, cost, heat map, outcomes
    for name in ("agent-a", "agent-b", "agent__c"):
        assert name in dom
    assert "Pareto" in dom and "Breaking Resolved" in dom
    # Only agent-a states steps: its row (mean of 1..12, one step-limit hit) and no row for the others.
    start = dom.index("<h2>Agent steps</h2>")
    steps = dom[start:dom.index("</section>", start)]
    assert "<td>agent-a</td><td>12/12</td><td>6.5</td><td>6.5</td>" in steps and "<td>agent-b</td>" not in steps
    assert "<td>1: zen__core-11</td>" in steps

    shot = tmp_path / "report.png"
    res = chromium(["--window-size=1100,2200", f"--screenshot={shot}", "--hide-scrollbars"], tmp_path, page.as_uri())
    assert console_lines(res.stderr) == []
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a real picture, not a blank page


# -- the layout rules, measured in the page at 1400 and at 800 px --------------------------------

LONG_NAMES = ["20240609_moatless_gpt4o", "20240623_moatless_claude-3.5-sonnet",
              "20240728_sweagent_gpt4o_with_a_rather_long_suffix_for_the_labels"]
LONG_REPOS = ["scikit-learn__scikit-learn", "matplotlib__matplotlib", "pytest-dev__pytest", "sympy__sympy"]

# Added to a copy of the page for the test only (the report itself holds no script): every SVG
# label's box against its plot's edges, overlaps between name labels, sideways scrolling.
MEASURE = """<script>
(() => {
  const out = {labels: [], overlaps: [], scrolls: []};
  for (const svg of document.querySelectorAll('svg')) {
    const edge = svg.getBoundingClientRect(), plot = svg.getAttribute('aria-label'), named = [];
    for (const t of svg.querySelectorAll('text')) {
      const b = t.getBoundingClientRect(), kind = t.getAttribute('class') || '';
      const inside = b.left >= edge.left - 0.5 && b.top >= edge.top - 0.5 && b.right <= edge.right + 0.5
                     && b.bottom <= edge.bottom + 0.5;
      out.labels.push({plot, kind, text: t.textContent, inside});
      if (kind) named.push([t.textContent, b]);
    }
    for (let i = 0; i < named.length; i++) for (let j = i + 1; j < named.length; j++) {
      const [na, a] = named[i], [nb, b] = named[j];
      if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)
        out.overlaps.push([plot, na, nb]);
    }
  }
  for (const d of document.querySelectorAll('.scroll'))
    out.scrolls.push({section: d.closest('section').querySelector('h2').textContent,
                      sideways: d.scrollWidth > d.clientWidth + 1});
  out.page = {scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth};
  const pre = document.createElement('pre');
  pre.id = 'layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def write_long_runs(root: Path) -> tuple[Path, Path]:
    """Three systems with long names that tie, four repositories, costs."""
    preds = []
    for s, name in enumerate(LONG_NAMES):
        for n in range(12):
            iid = f"{LONG_REPOS[n % 4]}-{1000 + n}"
            d = root / "runs" / name / iid
            d.mkdir(parents=True)
            ok = (n + s) % 3 == 0
            ts = {"FAIL_TO_PASS": {"success": ["t"] if ok else [], "failure": [] if ok else ["u"]},
                  "PASS_TO_PASS": {"success": ["p"], "failure": [] if ok or n % 2 else ["q"]}}
            (d / "report.json").write_text(json.dumps({iid: {"patch_is_None": False, "patch_exists": True,
                                                             "patch_successfully_applied": True, "resolved": ok,
                                                             "tests_status": ts}}))
            preds.append({"instance_id": iid, "model_name_or_path": name, "model_patch": "x", "cost": 0.5 + s * 0.3})
    p = root / "preds.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in preds))
    return root / "runs", p


def measure(tmp_path: Path, html: str, width: int) -> dict:
    page = tmp_path / f"measured-{width}.html"
    page.write_text(html.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    res = chromium(["--dump-dom", f"--window-size={width},900"], tmp_path, page.as_uri())
    assert res.returncode == 0, res.stderr[-2000:]
    found = re.search(r'<pre id="layout">(.*?)</pre>', res.stdout, re.S)
    assert found, res.stdout[-2000:]
    import html as html_module

    return json.loads(html_module.unescape(found.group(1)))


@pytest.mark.parametrize("width", [1400, 800])
def test_report_layout_keeps_names_whole_and_in_view(tmp_path: Path, width: int):
    runs, preds = write_long_runs(tmp_path)
    html = report_html(report_from_paths([runs], prediction_files=[preds]))
    assert "Highest rate" not in html and "All 3 systems tie at 33.3%" in html  # a tie is said as one
    layout = measure(tmp_path, html, width)
    outside = [(lab["plot"], lab["text"]) for lab in layout["labels"] if not lab["inside"]]
    assert outside == []  # no label runs past its plot's edge (the first character lost)
    assert layout["overlaps"] == []
    heads = sorted(lab["text"] for lab in layout["labels"] if lab["kind"] == "col-head")
    assert heads == sorted(LONG_NAMES)  # the heat map's column headers: every name whole
    rows = {lab["plot"]: set() for lab in layout["labels"]}
    for lab in layout["labels"]:
        if lab["kind"] == "row-label":
            rows[lab["plot"]].add(lab["text"])
    assert rows["resolved rate per system with 95% intervals"] == set(LONG_NAMES)
    assert rows["outcome categories per system"] == set(LONG_NAMES)
    assert rows["resolved rate per repository and system"] == {r.replace("__", "/") for r in LONG_REPOS}
    assert {lab["text"] for lab in layout["labels"] if lab["kind"] == "point-label"} == set(LONG_NAMES)
    assert layout["page"]["scrollWidth"] <= layout["page"]["innerWidth"]  # the page never scrolls sideways
    if width == 1400:  # wide enough for every table and plot, the outcome table among them
        assert [s["section"] for s in layout["scrolls"] if s["sideways"]] == []
