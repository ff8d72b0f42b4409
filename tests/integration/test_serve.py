"""`issuebench serve`: the loopback model server `make demo` predicts against, as a user runs it.

The real command in a subprocess serves the demo's infer script with the demo's faults; the
`next:` line it prints (infer on the demo's tasks against it) runs, and so does the eval that one
prints; Ctrl-C stops the server with one line.
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.interruptible import interruptible

pytestmark = pytest.mark.xdist_group("demo-eval")
ISSUEBENCH = Path(sys.executable).with_name("issuebench")


def next_argv(text: str) -> list[str]:
    [line] = [ln for ln in text.splitlines() if ln.startswith("next: ")]
    argv = shlex.split(line.removeprefix("next: "))
    assert Path(argv[0]).name == "issuebench", argv
    return [str(ISSUEBENCH), *argv[1:]]


def test_serve_replays_the_demos_predict_step(tmp_path: Path) -> None:
    # Through the trampoline: a test run started in the background ignores SIGINT, and the
    # server would then never see the one sent to stop it.
    server = subprocess.Popen(interruptible("-m", "issuebench", "serve", "demo:infer", "--write-script",
                                            str(tmp_path / "s.json")),
                              cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        head = server.stdout.readline()
        assert "serving replay model 'replay-infer' at http://127.0.0.1:" in head and "429,500" in head, head
        infer = next_argv(server.stdout.readline())
        predicted = subprocess.run(infer, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert predicted.returncode == 0, predicted.stdout[-2000:] + predicted.stderr[-2000:]
        preds = tmp_path / "demo-run" / "predict" / "infer" / "preds.jsonl"
        assert len(preds.read_text().splitlines()) == 3
        graded = subprocess.run([*next_argv(predicted.stdout), "--run-id", "served", "-o", str(tmp_path / "eval")],
                                cwd=tmp_path, capture_output=True, text=True, timeout=900)
        assert graded.returncode == 0, graded.stdout[-2000:] + graded.stderr[-2000:]
        assert "3/3 resolved" in graded.stdout
    finally:
        server.send_signal(signal.SIGINT)
        _out, err = server.communicate(timeout=60)
    assert server.returncode == 130
    # Three answers; the rate limit and the server error came first and were retried.
    assert err.strip().splitlines() == ["stopped: 3 answer(s) to 5 request(s), 2 fault(s) injected"], err
    assert json.loads((tmp_path / "s.json").read_text())["model"] == "replay-infer"


def test_serve_refuses_what_it_cannot_serve(tmp_path: Path) -> None:
    for args, words in ((["demo:nope"], "unknown demo script"), (["demo:infer", "--faults", "418"], "option --faults"),
                        ([str(tmp_path / "missing.json")], "cannot read the replay script")):
        proc = subprocess.run([str(ISSUEBENCH), "serve", *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and words in proc.stderr, (args, proc.stderr)
