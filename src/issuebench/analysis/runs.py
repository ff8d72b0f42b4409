"""Read evaluation runs, ours or the reference harness's, into per-system, per-instance results.

A run can be given at any level:

- the run summary file `<model>.<run_id>.json`;
- the output folder holding `logs/run_evaluation/...` and the summaries;
- `logs/run_evaluation`, a `<run_id>` folder (one system per model folder inside);
- a `<model>` folder, or any folder of instance folders (e.g. a folder of reference logs).

Per instance, `result.json` (our full InstanceReport) is used when present; otherwise the
reference's `report.json`, from which the status and the outcome category are derived. A folder
of the reference's with neither counts as an error, as in the reference (no report means the patch
did not apply, the run timed out, or the harness failed). A folder of ours without result.json is
no verdict at all: an instance an interrupted run never finished (harness.staging.unfinished); it
is left out, and said in the run's notes. Ids the summary lists without a folder get the summary's
verdict (empty patch, error, or missing when not submitted).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from issuebench.analysis.costs import PredictionUsage
from issuebench.analysis.outcomes import outcome_from_tests_status
from issuebench.errors import InputError
from issuebench.harness import unfinished
from issuebench.models import InstanceReport, InstanceStatus, Outcome, Task, TestsStatus

# Status for a task of the dataset that the run never submitted.
MISSING = "missing"
_INSTANCE_MARKERS = ("report.json", "result.json", "run_instance.log", "test_output.txt", "patch.diff")
_MAX_DEPTH = 4


@dataclass
class InstanceResult:
    instance_id: str
    status: str                      # an InstanceStatus value, or "missing"
    resolved: bool = False
    outcome: Outcome | None = None
    repo: str = ""
    cost: float | None = None
    tests_status: TestsStatus | None = None
    reason: str = ""
    # From the prediction (an agent's): its model calls and how its run ended; None when unknown.
    steps: int | None = None
    agent_exit: str | None = None


@dataclass
class RunResults:
    """One system's results: its label, where they came from, and one result per instance."""

    name: str
    source: Path
    instances: dict[str, InstanceResult] = field(default_factory=dict)
    run_id: str | None = None
    model: str | None = None
    total: int | None = None         # the dataset size the summary states, if any
    notes: list[str] = field(default_factory=list)

    @property
    def resolved_ids(self) -> set[str]:
        return {i for i, r in self.instances.items() if r.resolved}


def repo_from_instance_id(instance_id: str) -> str:
    """'astropy__astropy-12907' -> 'astropy/astropy' (the SWE-bench id convention)."""
    stem = instance_id.rsplit("-", 1)[0] if "-" in instance_id else instance_id
    return stem.replace("__", "/", 1) if "__" in stem else stem


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not valid JSON: {exc.msg}", line=exc.lineno,
                         hint="re-run the evaluation or regrade the logs to rewrite it") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None


def _is_summary(data: Any) -> bool:
    return isinstance(data, dict) and "resolved_ids" in data and "total_instances" in data


def _looks_like_instance_dir(path: Path) -> bool:
    # A hidden folder is an instance being written (harness.staging), never a result.
    return path.is_dir() and not path.name.startswith(".") and any((path / m).exists() for m in _INSTANCE_MARKERS)


def _status_from_reference(body: dict[str, Any]) -> tuple[str, str]:
    if body.get("resolved"):
        return InstanceStatus.RESOLVED.value, ""
    if body.get("patch_is_None") or body.get("patch_exists") is False:
        return InstanceStatus.EMPTY.value, "empty patch"
    if not body.get("patch_successfully_applied", False):
        return InstanceStatus.APPLY_FAILED.value, "report.json says the patch did not apply"
    return InstanceStatus.UNRESOLVED.value, ""


def _from_reference_report(path: Path, instance_id: str) -> InstanceResult:
    data = _read_json(path)
    if not isinstance(data, dict) or not data:
        raise InputError(path, "expected an object keyed by instance id")
    body = data.get(instance_id)
    if body is None:
        # The folder name and the key disagree (a renamed folder): trust the file's own key.
        instance_id, body = next(iter(data.items()))
    if not isinstance(body, dict):
        raise InputError(path, "expected an object", field=instance_id)
    status, reason = _status_from_reference(body)
    tests_status = None
    outcome = None
    if "tests_status" in body:
        try:
            tests_status = TestsStatus.model_validate(body["tests_status"])
        except ValidationError as exc:
            raise InputError(path, f"tests_status is malformed: {exc.errors()[0]['msg']}",
                             field="tests_status") from None
        if body.get("patch_successfully_applied", True):
            outcome = outcome_from_tests_status(tests_status)
    return InstanceResult(instance_id=instance_id, status=status, resolved=bool(body.get("resolved")),
                          outcome=outcome, repo=repo_from_instance_id(instance_id),
                          tests_status=tests_status, reason=reason)


def _from_result_json(path: Path) -> InstanceResult:
    data = _read_json(path)
    try:
        rep = InstanceReport.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(path, err["msg"], field=".".join(str(x) for x in err["loc"]),
                         hint="the file should be a dump of issuebench's InstanceReport") from None
    outcome = rep.outcome
    if outcome is None and rep.tests_status is not None and rep.patch_successfully_applied:
        outcome = outcome_from_tests_status(rep.tests_status)
    return InstanceResult(instance_id=rep.instance_id, status=rep.status.value, resolved=rep.resolved,
                          outcome=outcome, repo=rep.repo or repo_from_instance_id(rep.instance_id),
                          cost=rep.cost, tests_status=rep.tests_status, reason=rep.reason)


def read_instance_dir(path: Path) -> InstanceResult:
    """One instance folder -> its result. result.json wins; report.json is the reference's."""
    if (path / "result.json").exists():
        return _from_result_json(path / "result.json")
    if (path / "report.json").exists():
        return _from_reference_report(path / "report.json", path.name)
    return InstanceResult(instance_id=path.name, status=InstanceStatus.ERROR.value,
                          repo=repo_from_instance_id(path.name),
                          reason="no report.json: the patch did not apply, the run timed out or failed")


def _read_system_dir(path: Path, notes: list[str] | None = None) -> dict[str, InstanceResult]:

    results: dict[str, InstanceResult] = {}
    left_out: list[str] = []
    for child in sorted(path.iterdir()):
        if _looks_like_instance_dir(child):
            if unfinished(child):
                left_out.append(child.name)
                continue
            res = read_instance_dir(child)
            results[res.instance_id] = res
    if left_out and notes is not None:
        notes.append(unfinished_note(left_out))
    return results


def unfinished_note(ids: list[str]) -> str:
    return (f"{len(ids)} instance folder(s) without result.json (instances an interrupted run never finished) "
            f"are not results and were left out: {', '.join(ids[:5])}" + (", ..." if len(ids) > 5 else ""))


# The ids a run evaluated (incomplete_ids lists the dataset's others, which it did not).
_SUMMARY_ID_KEYS = ("submitted_ids", "completed_ids", "resolved_ids", "unresolved_ids", "empty_patch_ids",
                    "error_ids")


def _apply_summary(run: RunResults, summary: dict[str, Any]) -> None:
    """Fill in what the summary knows and the folders do not (empty, errored, unsubmitted ids).

    The summary says which instances the run was: folders of other ids (an earlier run that used
    the same run id) are left out, so a report always agrees with the summary it reads.
    """
    run.total = summary.get("total_instances")
    listed = {iid for key in _SUMMARY_ID_KEYS for iid in summary.get(key) or []}
    stale = sorted(i for i in run.instances if i not in listed)
    for iid in stale:
        del run.instances[iid]
    if stale:
        run.notes.append(f"{len(stale)} instance folder(s) beside the summary are not part of its run "
                         f"(an earlier run with the same run id) and were left out: {', '.join(stale[:5])}"
                         + (", ..." if len(stale) > 5 else ""))
    verdicts = [
        ("resolved_ids", InstanceStatus.RESOLVED.value, "listed as resolved in the run summary"),
        ("unresolved_ids", InstanceStatus.UNRESOLVED.value, "listed as unresolved in the run summary"),
        ("empty_patch_ids", InstanceStatus.EMPTY.value, "empty patch (run summary)"),
        ("error_ids", InstanceStatus.ERROR.value, "error in the run summary: no report was written"),
        ("incomplete_ids", MISSING, "not submitted (run summary)"),
    ]
    for key, status, reason in verdicts:
        for iid in summary.get(key) or []:
            if iid not in run.instances:
                run.instances[iid] = InstanceResult(
                    instance_id=iid, status=status, resolved=status == InstanceStatus.RESOLVED.value,
                    repo=repo_from_instance_id(iid), reason=reason)


def _split_summary_name(path: Path) -> list[tuple[str, str]]:
    """'<model>.<run_id>.json' -> every (model, run_id) split; model names may hold dots."""
    parts = path.stem.split(".")
    return [(".".join(parts[:i]), ".".join(parts[i:])) for i in range(1, len(parts))]


def _logs_for_summary(path: Path) -> tuple[str, str, Path | None]:
    splits = _split_summary_name(path)
    for model, run_id in splits:
        logs = path.parent / "logs" / "run_evaluation" / run_id / model
        if logs.is_dir():
            return model, run_id, logs
    model, run_id = splits[0] if splits else (path.stem, "")
    return model, run_id, None


def _summary_for_logs(system_dir: Path) -> Path | None:
    """OUTPUT/logs/run_evaluation/<run_id>/<model>  ->  OUTPUT/<model>.<run_id>.json, if it exists."""
    parents = system_dir.parents
    if len(parents) >= 4 and parents[0].parent.name == "run_evaluation" and parents[2].name == "logs":
        candidate = parents[3] / f"{system_dir.name}.{parents[0].name}.json"
        if candidate.exists():
            return candidate
    return None


_NOT_A_SUMMARY_HINT = "give a <model>.<run_id>.json summary, a run folder, or a folder of instance folders"


def _read_summary_file(path: Path) -> dict[str, Any]:
    """A run summary, or one line saying what the file is instead (a dataset, predictions, ...)."""
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        kind = "a JSON Lines file (a dataset or predictions?)" if path.suffix == ".jsonl" else "not JSON"
        raise InputError(path, f"not a run summary: {kind}", hint=_NOT_A_SUMMARY_HINT) from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None
    if not _is_summary(summary):
        raise InputError(path, "not a run summary (no resolved_ids / total_instances)", hint=_NOT_A_SUMMARY_HINT)
    return summary


def _run_from_summary_file(path: Path) -> RunResults:
    summary = _read_summary_file(path)
    model, run_id, logs = _logs_for_summary(path)
    run = RunResults(name=model, source=path, run_id=run_id, model=model)
    if logs is not None:
        run.instances = _read_system_dir(logs, run.notes)
    else:
        run.notes.append("per-instance logs not found beside the summary: statuses come from the summary only")
    _apply_summary(run, summary)
    return run


def _run_from_system_dir(path: Path) -> RunResults:
    parent = path.parent
    in_run_layout = parent.parent.name == "run_evaluation"
    run = RunResults(name=path.name, source=path, run_id=parent.name if in_run_layout else None,
                     model=path.name if in_run_layout else None)
    run.instances = _read_system_dir(path, run.notes)
    summary_path = _summary_for_logs(path)
    if summary_path is not None:
        _apply_summary(run, _read_json(summary_path))
    return run


def _system_dirs(path: Path, depth: int = 0) -> list[Path]:
    """Folders whose children are instance folders, found at most a few levels down."""
    if depth > _MAX_DEPTH or not path.is_dir():
        return []
    children = [c for c in sorted(path.iterdir()) if c.is_dir() and not c.name.startswith(".")]
    if any(_looks_like_instance_dir(c) for c in children):
        return [path]
    found: list[Path] = []
    for child in children:
        found.extend(_system_dirs(child, depth + 1))
    return found


def discover_runs(path: Path) -> list[RunResults]:
    """Every system found at `path`, at whatever level it was given."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "no such run file or folder",
                         hint="give a run summary JSON, an output folder, a run folder or a folder of instance folders")
    if path.is_file():
        return [_run_from_summary_file(path)]
    if _looks_like_instance_dir(path):

        if unfinished(path):
            raise InputError(path, "an instance an interrupted run never finished (no result.json): not a result",
                             hint="rerun the eval with the same --run-id to finish it")
        res = read_instance_dir(path)
        return [RunResults(name=path.parent.name, source=path, instances={res.instance_id: res})]
    runs = [_run_from_system_dir(d) for d in _system_dirs(path)]
    covered = {r.source for r in runs}
    # Summaries whose logs were not found (or have no logs) still count as systems.
    for summary in sorted(path.glob("*.json")):
        try:
            data = json.loads(summary.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if _is_summary(data):
            _, _, logs = _logs_for_summary(summary)
            if logs is None or logs not in covered:
                runs.append(_run_from_summary_file(summary))
    if not runs:
        raise InputError(path, "found no instance folders (with report.json) and no run summary here",
                         hint="point at <output>/logs/run_evaluation/<run_id>, a model folder, or a summary JSON")
    return runs


def load_runs(paths: Iterable[Path | str]) -> list[RunResults]:
    """Load every system from every path, and give each a unique name (model, then @run_id)."""
    runs: list[RunResults] = []
    for p in paths:
        runs.extend(discover_runs(Path(p)))
    _unique_names(runs)
    return runs


def _unique_names(runs: Sequence[RunResults]) -> None:
    counts: dict[str, int] = {}
    for r in runs:
        counts[r.name] = counts.get(r.name, 0) + 1
    seen: dict[str, int] = {}
    for r in runs:
        if counts[r.name] > 1:
            base = f"{r.name}@{r.run_id}" if r.run_id else f"{r.name}@{r.source.parent.name}"
            seen[base] = seen.get(base, 0) + 1
            r.name = base if seen[base] == 1 else f"{base}#{seen[base]}"


def restrict_to_dataset(run: RunResults, tasks: Sequence[Task]) -> None:
    """Make the run cover exactly the dataset: absent tasks become 'missing', extra ids are dropped."""
    by_id = {t.instance_id: t for t in tasks}
    extra = [i for i in run.instances if i not in by_id]
    for iid in extra:
        del run.instances[iid]
    if extra:
        run.notes.append(f"{len(extra)} instance(s) not in the dataset were left out")
    for iid, task in by_id.items():
        res = run.instances.get(iid)
        if res is None:
            run.instances[iid] = InstanceResult(instance_id=iid, status=MISSING, repo=task.repo,
                                                reason="no result in this run")
        else:
            res.repo = task.repo
    run.total = len(by_id)


def attach_usage(run: RunResults, usage: dict[str, PredictionUsage]) -> int:
    """Usage from predictions: a stated cost overrides result.json's; returns how many instances matched."""
    n = 0
    for iid, u in usage.items():
        res = run.instances.get(iid)
        if res is None:
            continue
        n += 1
        if u.cost is not None:
            res.cost = u.cost
        res.steps, res.agent_exit = u.steps, u.exit_status
    return n
