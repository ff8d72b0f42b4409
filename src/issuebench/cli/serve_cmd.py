"""`issuebench serve REPLAY`: the loopback chat-completions server `make demo` predicts against.

It answers from a replay script (a file, or the demo's own: `demo:agent`, `demo:infer`) with the
faults it is told to inject, until Ctrl-C. For the demo's scripts it prints the exact `agent` or
`infer` command that replays the demo's predict step against it.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import typer

from issuebench.cli.common import console, friendly_errors, say_interrupted
from issuebench.cli.demo_predict import pick_tasks
from issuebench.cli.next_step import command, say_next
from issuebench.errors import InputError, OptionError

DEMO_SCRIPTS = ("demo:agent", "demo:infer")
DEMO_FAULTS = ("429", "500")  # what `make demo` injects: a rate limit, then a server error
FAULTS = ("429", "500", "502", "503", "400", "drop", "ok")


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)


@friendly_errors
def serve_command(
    replay: str = typer.Argument(..., help="A replay script (JSON: docs/predict.md), or demo:agent / "
                                 "demo:infer, the scripts `make demo` predicts with."),
    port: int = typer.Option(0, "--port", help="Port on 127.0.0.1 (0: a free one, printed)."),
    faults: str = typer.Option(None, "--faults", help="Faults to inject, one per request in order, separated "
                               "by commas: 429, 500, 502, 503, 400, drop, slow:SECONDS, ok (default: 429,500 "
                               "for the demo's scripts, none for a file)."),
    write_script: Path = typer.Option(None, "--write-script", help="Also write the script served to this file "
                                      "(to edit it, or to use it in-process as --model replay:FILE)."),
) -> None:
    """Serve a replay model over loopback HTTP (the OpenAI chat-completions API) until Ctrl-C."""
    from issuebench.demo import demo_tasks
    from issuebench.llm import LoopbackServer, ReplayModel, solve_script

    injected = _faults(faults, DEMO_FAULTS if replay in DEMO_SCRIPTS else ())
    chosen = []
    if replay in DEMO_SCRIPTS:
        mode = replay.removeprefix("demo:")
        chosen = pick_tasks(demo_tasks())
        script = solve_script(chosen, mode=mode, model=f"replay-{mode}")
        model = ReplayModel(script)
    elif replay.startswith("demo:"):
        raise InputError(replay, "unknown demo script", hint=f"use {' or '.join(DEMO_SCRIPTS)}, or a replay file")
    else:
        model = ReplayModel.from_file(Path(replay))
        script = json.loads(Path(replay).read_text(encoding="utf-8"))
    if write_script is not None:
        write_script.parent.mkdir(parents=True, exist_ok=True)
        write_script.write_text(json.dumps(script, indent=2) + "\n", encoding="utf-8")
    try:
        server = LoopbackServer(model, faults=injected, port=port)
    except OSError as exc:
        raise OptionError("--port", f"cannot listen on 127.0.0.1:{port}: {exc.strerror}",
                          hint="pick another port, or 0 for a free one") from None
    with server:
        console.print(f"serving replay model {model.name!r} at {server.url}"
                      + (f", injecting {','.join(injected)}" if injected else "") + " (Ctrl-C stops)",
                      highlight=False, soft_wrap=True)
        if chosen:  # the demo's predict step, as `make demo` runs it, against this server
            mode = replay.removeprefix("demo:")
            say_next(console, command(mode, options={
                "--dataset": "demo", "--instance-ids": [t.instance_id for t in chosen],
                "--output": f"demo-run/predict/{mode}", "--model": model.name, "--base-url": server.url}))
        else:
            console.print(f"point a verb at it with: --model {model.name} --base-url {server.url}",
                          highlight=False, soft_wrap=True)
        sys.stdout.flush()
        try:
            threading.Event().wait()  # until Ctrl-C (or SIGTERM, which stops as Ctrl-C does)
        except KeyboardInterrupt as stop:  # the way a server ends: one line, 128 + the signal
            raise say_interrupted(stop, f"stopped: {server.answered} answer(s) to {server.requests} "
                                  f"request(s), {len(server.fault_log)} fault(s) injected") from None


def _faults(value: str | None, default: tuple[str, ...]) -> list[str]:
    if value is None:
        return list(default)
    found = [f.strip() for f in value.split(",") if f.strip()]
    for fault in found:
        if fault not in FAULTS and not (fault.startswith("slow:") and _seconds(fault[5:])):
            raise OptionError("--faults", f"unknown fault {fault!r}",
                              hint=f"use {', '.join(FAULTS)} or slow:SECONDS, separated by commas")
    return found


def _seconds(text: str) -> bool:
    try:
        return float(text) >= 0
    except ValueError:
        return False
