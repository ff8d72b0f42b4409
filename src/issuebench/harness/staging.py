"""An instance folder is written aside and put in place whole, so a stopped run leaves no half of one.

While an instance runs, its files go to a hidden folder beside its own, `.<instance_id>.partial`.
When it finishes, `publish` puts that folder in place of `<instance_id>` (inside `may_record`,
so never once the run was interrupted). Whatever stops the run while the instance is in flight
(Ctrl-C, SIGHUP, SIGTERM, a crash), the instance's own folder is as it was before the run: absent,
or the finished result of an earlier run with the same run id, kept whole (the next run re-runs it
when its patch changed, and a report meanwhile reads the earlier verdict, never a partial one).

Every reader of run folders skips names that start with a dot (`hidden`); the next run of the same
run id (the run lock makes it the only writer) removes what a crash left (`sweep`).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from issuebench.interrupts import may_record

LOG_FILE = "run_instance.log"
_RESULT_FILE = "result.json"
_REPORT_FILE = "report.json"
_PARTIAL = ".partial"
_PREVIOUS = ".previous"  # the earlier folder, for the moment of the swap
# A line of our run_instance.log (runlog.InstanceLog): "2024-05-01 12:00:00 [+   0.12s] ...".
_OUR_LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[\+ *\d+\.\d+s\] ")
_OUR_TEST_OUTPUT = re.compile(r">>>>> Start Test Output [0-9a-f]{16,}\s*$")


def hidden(path: Path) -> bool:
    """A folder no reader counts: an instance being written, or the one it replaces."""
    return path.name.startswith(".")


def staging_dir(final: Path) -> Path:
    return final.with_name(f".{final.name}{_PARTIAL}")


def _previous_dir(final: Path) -> Path:
    return final.with_name(f".{final.name}{_PREVIOUS}")


def open_staging(final: Path) -> Path:
    """A fresh folder to write the instance in; its log carries on the earlier run's log."""
    work = staging_dir(final)
    shutil.rmtree(work, ignore_errors=True)  # what a crashed run left
    work.mkdir(parents=True)
    if (final / LOG_FILE).is_file():  # the log grows across reruns of a run id
        shutil.copyfile(final / LOG_FILE, work / LOG_FILE)
    return work


def publish(work: Path, final: Path) -> bool:
    """Put the finished `work` folder in place of `final`. False (and nothing moved) once the run
    was interrupted: a verdict reached after the interrupt may be its doing."""
    with may_record() as allowed:
        if not allowed:
            return False
        previous = _previous_dir(final)
        shutil.rmtree(previous, ignore_errors=True)
        if final.exists():
            final.rename(previous)
        work.rename(final)
        shutil.rmtree(previous, ignore_errors=True)
        return True


def drop_staging(final: Path) -> None:
    """Forget an unfinished instance: its hidden folder goes; its own folder stays as it was
    (when an interrupt fell between the two renames of `publish`, the earlier folder comes back)."""
    shutil.rmtree(staging_dir(final), ignore_errors=True)
    previous = _previous_dir(final)
    if previous.exists():
        if final.exists():
            shutil.rmtree(previous, ignore_errors=True)
        else:
            previous.rename(final)


def sweep(model_dir: Path) -> int:
    """Remove what runs that crashed left in a model folder. Returns how many instances."""
    if not model_dir.is_dir():
        return 0
    left = {child.name[1:-len(suffix)] for child in model_dir.iterdir() for suffix in (_PARTIAL, _PREVIOUS)
            if hidden(child) and child.name.endswith(suffix)}
    for name in left:
        drop_staging(model_dir / name)
    return len(left)


def unfinished(instance_dir: Path) -> bool:
    """A folder issuebench wrote for an instance that never finished: neither result.json nor
    report.json, and our own log or test output. (Harnesses before the hidden folder left such
    folders when interrupted: patch.diff, an eval.sh saying the tests did not run, an empty or
    cut test_output.txt.) A reference harness folder without report.json is not one: for the
    reference that is an instance that errored."""
    if hidden(instance_dir):
        return True
    if (instance_dir / _RESULT_FILE).exists() or (instance_dir / _REPORT_FILE).exists():
        return False
    log = _first_line(instance_dir / LOG_FILE)
    if log is not None and (log == "" or _OUR_LOG_LINE.match(log)):
        return True
    output = _first_line(instance_dir / "test_output.txt")
    return output is not None and bool(_OUR_TEST_OUTPUT.match(output))


def _first_line(path: Path) -> str | None:
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            return fh.readline().rstrip("\n")
    except OSError:
        return None
