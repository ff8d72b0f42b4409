"""Grade saved logs again without running anything: issuebench's runs and the reference's.

A log folder is any tree holding per-instance folders with `test_output.txt`; the instance id is
the folder's name. In the run layout (`logs/run_evaluation/<run>/<model>/<id>/`) the run id and
model come from the path.

Which log is which, and how each is read:

- issuebench's own logs start with `>>>>> Start Test Output <nonce>` (written by the harness,
  outside the sandbox), so only the section carrying that nonce is graded. A section without
  results is unparseable, except for a `fail_only` row whose runner's closing count shows that
  tests ran (its parser records failures only, so a clean run lists nothing).
- Reference logs with plain markers (swebench 3.x and later): an apply failure, reset failure,
  test error or timeout line means the patch counts as not applied; otherwise the section
  between the first markers is parsed, and the whole log when that section yields nothing.
- Reference logs without markers (swebench 2.x, mid-2024 runs): the same failure lines, plus
  "Failed to reset task environment" and the need for an "applied patch" line; the log after
  the last `>>>>> Applied Patch (pred)` is parsed whole.

A folder of ours without result.json is an instance an interrupted run never finished (its log
may be cut, or hold what a killed test run printed): it is no verdict, so it is left out and named
(`RegradeResult.unfinished`), as hidden folders (an instance being written) always are.

The grading rule "auto" reproduces each log's own harness: "current" for ours, "swebench-4"
for reference logs with markers, "swebench-2" for reference logs without (see grading.py).
Reference logs are parsed with the parser the reference used for the repository, in the form
of its time (the v2 pytest parser kept only the first token of an id until swebench 5). Every
parser gets the row (jekyll's and immutable-js's read its instance id to pick a format), and the
row's `eval_type` goes to grading.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from issuebench.envs import resolve_spec
from issuebench.errors import IssuebenchError
from issuebench.grading import GRADING_RULES, GradingRule, explain_grade, grade
from issuebench.harness import ARTIFACT as RUNNER_REPORT_ARTIFACT
from issuebench.harness import (
    RunnerReport,
    cut_after_runner_summary,
    disagreements,
    read_instance_result,
    read_report,
    unfinished,
    write_instance_result,
    write_summary,
)
from issuebench.models import InstanceReport, InstanceStatus, Task, TestStatusMap
from issuebench.parsers import (
    END_TEST_OUTPUT,
    START_TEST_OUTPUT,
    canonical_name,
    extract_test_output,
    get_parser,
    parser_for_repo,
    recorded_exit_code,
    suite_ran,
)

TEST_OUTPUT_FILE = "test_output.txt"
LogKind = Literal["issuebench", "reference", "reference-2"]

_NONCE_LINE = re.compile(re.escape(START_TEST_OUTPUT) + r" (\S+)[ \t]*\r?$", re.MULTILINE)
APPLY_PATCH_FAIL = ">>>>> Patch Apply Failed"
APPLY_PATCH_PASS = ">>>>> Applied Patch"
RESET_FAILED = ">>>>> Reset Failed"
TESTS_ERROR = ">>>>> Tests Errored"
TESTS_TIMEOUT = ">>>>> Tests Timed Out"
_RESET_FAILED_OLD = "Failed to reset task environment"
# The parsers whose reference form changed over time: name -> the form older harnesses used.
_LEGACY_PARSERS = {"parse_log_pytest_v2": "parse_log_pytest_v2_legacy",
                   "parse_log_astropy": "parse_log_pytest_v2_legacy",
                   "parse_log_scikit": "parse_log_pytest_v2_legacy",
                   "parse_log_sphinx": "parse_log_pytest_v2_legacy"}


@dataclass(frozen=True)
class FoundLog:
    instance_id: str
    test_output: Path
    run_id: str | None = None
    model: str | None = None

    @property
    def instance_dir(self) -> Path:
        return self.test_output.parent


@dataclass
class ReadLog:
    """What a log says before grading: the kind, the status map or why there is none."""

    kind: LogKind
    status_map: TestStatusMap | None
    status: InstanceStatus = InstanceStatus.UNRESOLVED
    reason: str = ""
    parser: str = ""
    returncode: int | None = None  # the test command's exit status, when the log records it


@dataclass
class RegradeResult:
    reports: list[InstanceReport] = field(default_factory=list)
    summaries: list[Path] = field(default_factory=list)
    output_dir: Path | None = None
    unfinished: list[str] = field(default_factory=list)  # ids of folders that are no verdict, left out


def repo_from_instance_id(instance_id: str) -> str:
    """`scikit-learn__scikit-learn-12421` -> `scikit-learn/scikit-learn`, as the reference does."""
    return "-".join(instance_id.replace("__", "/").split("-")[:-1])


def find_logs(logs_dir: Path, *, exclude: Path | None = None) -> list[FoundLog]:
    """Every `<id>/test_output.txt` under `logs_dir`, sorted by path."""
    found = []
    excluded = exclude.resolve() if exclude is not None else None
    for path in sorted(Path(logs_dir).rglob(TEST_OUTPUT_FILE)):
        if excluded is not None and path.resolve().is_relative_to(excluded):
            continue
        parts = path.relative_to(logs_dir).parts
        if any(part.startswith(".") for part in parts[:-1]):  # an instance being written (harness.staging)
            continue
        run_id = model = None
        if "run_evaluation" in parts:
            at = len(parts) - 1 - parts[::-1].index("run_evaluation")
            rest = parts[at + 1:]
            if len(rest) == 4:  # run / model / id / test_output.txt
                run_id, model = rest[0], rest[1]
        found.append(FoundLog(instance_id=path.parent.name, test_output=path, run_id=run_id, model=model))
    return found


def log_kind(text: str) -> LogKind:
    if _NONCE_LINE.match(text.split("\n", 1)[0]):
        return "issuebench"
    if START_TEST_OUTPUT in text:
        return "reference"
    return "reference-2"


def parser_name_for(task: Task, kind: LogKind, rule: GradingRule, *, recipes_dir: Path | None = None,
                    override: str | None = None) -> str:
    """The parser the log's harness used: the row's own, else the recipe's, else the reference's."""
    name = override or task.log_parser or (task.env.log_parser if task.env is not None else None)
    if name is None and kind == "issuebench":
        name = _recipe_parser(task, recipes_dir)
    name = canonical_name(name or parser_for_repo(task.repo))
    if rule != "current":
        name = _LEGACY_PARSERS.get(name, name)
    return name


def _recipe_parser(task: Task, recipes_dir: Path | None) -> str | None:
    try:

        return resolve_spec(task, recipes_dir=recipes_dir).log_parser
    except Exception:  # no recipe for this repo: fall back to the reference's choice
        return None


def auto_rule(kind: LogKind) -> GradingRule:
    return {"issuebench": "current", "reference": "swebench-4", "reference-2": "swebench-2"}[kind]


def read_log(text: str, task: Task, *, rule: GradingRule | None = None, recipes_dir: Path | None = None,
             parser_name: str | None = None) -> tuple[ReadLog, GradingRule]:
    """Slice and parse one log the way the harness that wrote it did."""
    kind = log_kind(text)
    rule = rule or auto_rule(kind)
    name = parser_name_for(task, kind, rule, recipes_dir=recipes_dir, override=parser_name)
    parser = get_parser(name, task)  # jekyll's and immutable-js's parsers pick a format by row
    if kind == "issuebench":
        match = _NONCE_LINE.match(text.split("\n", 1)[0])
        assert match is not None
        section = extract_test_output(text, nonce=match.group(1))
        if section is None:
            return ReadLog(kind, None, InstanceStatus.LOG_UNPARSEABLE,
                           "the end marker with this run's nonce is missing", name), rule
        status_map = parser(cut_after_runner_summary(section))  # as the run itself read it
        if not status_map and task.eval_type == "fail_only" and suite_ran(section):
            # Parsers of fail_only rows record failures only: a clean run has no results to list.
            return ReadLog(kind, {}, parser=name, returncode=recorded_exit_code(text, match.group(1))), rule
        if not status_map:
            return ReadLog(kind, None, InstanceStatus.LOG_UNPARSEABLE,
                           "no test results between the markers", name), rule
        return ReadLog(kind, status_map, parser=name, returncode=recorded_exit_code(text, match.group(1))), rule

    failure = _reference_failure(text, kind)
    if failure is not None:
        status, reason = failure
        return ReadLog(kind, None, status, reason, name), rule
    if kind == "reference":
        section = extract_test_output(text)
        if section is None:  # a start marker without an end marker
            return ReadLog(kind, None, InstanceStatus.LOG_UNPARSEABLE,
                           f"'{END_TEST_OUTPUT}' missing", name), rule
        # The reference falls back to the whole log when the section holds no results.
        status_map = parser(section) or parser(text)
        return ReadLog(kind, status_map, parser=name, returncode=recorded_exit_code(text)), rule
    else:
        status_map = parser(text.split(f"{APPLY_PATCH_PASS} (pred)")[-1])
    return ReadLog(kind, status_map, parser=name), rule


def _reference_failure(text: str, kind: LogKind) -> tuple[InstanceStatus, str] | None:
    """The reference's "patch not applied" conditions, as a status and a reason."""
    if APPLY_PATCH_FAIL in text:
        return InstanceStatus.APPLY_FAILED, f"the log says '{APPLY_PATCH_FAIL}'"
    if TESTS_TIMEOUT in text:
        return InstanceStatus.TIMEOUT, f"the log says '{TESTS_TIMEOUT}'"
    for marker in (RESET_FAILED, TESTS_ERROR):
        if marker in text:
            return InstanceStatus.ERROR, f"the log says '{marker}'"
    if kind == "reference-2":
        if _RESET_FAILED_OLD in text:
            return InstanceStatus.ERROR, f"the log says '{_RESET_FAILED_OLD}'"
        if "applied patch" not in text.lower():
            return InstanceStatus.APPLY_FAILED, "no 'Applied patch' line and no test output markers"
    return None


def regrade_log(log: FoundLog, task: Task, *, strict: bool = False, rule: GradingRule | None = None,
                model: str | None = None, recipes_dir: Path | None = None,
                parser_name: str | None = None) -> InstanceReport:
    """One saved log -> its report. Never raises for a bad log: it gets a status and a reason."""
    model_name = model or log.model or "unknown"
    base = InstanceReport(instance_id=log.instance_id, model_name_or_path=model_name,
                          status=InstanceStatus.ERROR, repo=task.repo)

    previous = read_instance_result(log.instance_dir)
    try:
        text = log.test_output.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return base.model_copy(update={"reason": f"{log.test_output}: cannot read: {exc.strerror}"})
    if not text.strip() and previous is not None and not previous.status.completed:
        # The tests never ran (patch did not apply, environment failed ...): keep that verdict.
        return previous.model_copy(update={"model_name_or_path": model_name})
    read, used_rule = read_log(text, task, rule=rule, recipes_dir=recipes_dir, parser_name=parser_name)
    notes = [f"regraded from {log.test_output.name} ({read.kind} log, parser {read.parser}, rule {used_rule})"]
    if read.status_map is None:
        if previous is not None and not previous.status.completed and read.kind == "issuebench":
            return previous.model_copy(update={"model_name_or_path": model_name})
        return base.model_copy(update={
            "status": read.status, "reason": read.reason, "notes": notes,
            "patch_successfully_applied": read.status is InstanceStatus.LOG_UNPARSEABLE})
    report_file = log.instance_dir / RUNNER_REPORT_ARTIFACT
    runner = read_report(report_file.read_bytes()) if report_file.is_file() else RunnerReport()
    found = [] if task.eval_type == "fail_only" else disagreements(
        read.status_map, runner, task.FAIL_TO_PASS, task.PASS_TO_PASS, get_parser(read.parser, task=task))
    result = grade(read.status_map, task.FAIL_TO_PASS, task.PASS_TO_PASS, eval_type=task.eval_type,
                   strict=strict, rule=used_rule, returncode=read.returncode, disagreements=found)
    return base.model_copy(update={
        "status": InstanceStatus.RESOLVED if result.resolved else InstanceStatus.UNRESOLVED,
        "reason": explain_grade(result, read.status_map),
        "patch_successfully_applied": True,
        "resolved": result.resolved,
        "tests_status": result.tests_status,
        "outcome": result.outcome,
        "notes": [*notes, *result.strict_flags, *result.untrusted],
        **_carried_over(previous),
    })


def _carried_over(previous: InstanceReport | None) -> dict:
    """Facts of the original run that regrading does not change."""
    if previous is None:
        return {}
    keys = ("patch_status", "apply_method", "env_hash", "exclude_newer", "python", "cost", "durations")
    return {key: getattr(previous, key) for key in keys}


def regrade(logs_dir: Path, tasks: Iterable[Task], output_dir: Path | None = None, *,
            strict: bool = False, rule: str | None = None, run_id: str | None = None,
            model: str | None = None, recipes_dir: Path | None = None,
            parser_name: str | None = None, only: Collection[str] | None = None) -> RegradeResult:
    """Regrade every log under `logs_dir`; with `output_dir`, write reports and run summaries.

    `parser_name` forces one parser for every log; `recipes_dir` is the eval run's `--recipes`;
    `only`: the instance ids to regrade (the other logs are left out).
    """

    if parser_name is not None:
        get_parser(parser_name)  # an unknown name fails here, once, with the known names

    if rule is not None and rule != "auto" and rule not in GRADING_RULES:
        raise IssuebenchError(f"unknown grading rule {rule!r}",
                              hint=f"use auto or one of: {', '.join(GRADING_RULES)}")
    chosen_rule: GradingRule | None = None if rule in (None, "auto") else rule  # type: ignore[assignment]
    logs_dir = Path(logs_dir)
    if not logs_dir.is_dir():
        raise IssuebenchError(f"{logs_dir}: no such folder", hint="give the folder holding the run's logs")
    if output_dir is not None and Path(output_dir).resolve() == logs_dir.resolve():
        raise IssuebenchError(f"{output_dir}: --output is the logs folder itself",
                              hint="write the regraded reports to another folder; the original run stays as it is")
    by_id = {task.instance_id: task for task in tasks}
    logs = find_logs(logs_dir, exclude=output_dir)
    if only is not None and logs:
        logs = [log for log in logs if log.instance_id in set(only)]
        if not logs:
            raise IssuebenchError(f"{logs_dir}: no log of any of the --instance-ids",
                                  hint="check the ids against the instance folders under --logs")
    if not logs:
        raise IssuebenchError(f"{logs_dir}: no {TEST_OUTPUT_FILE} found in any folder below it",
                              hint="point --logs at a run folder (logs/run_evaluation/...) or a folder of instance folders")

    result = RegradeResult(output_dir=output_dir)
    groups: dict[tuple[str, str], list[InstanceReport]] = {}
    for log in logs:
        if unfinished(log.instance_dir):
            result.unfinished.append(log.instance_id)
            continue
        task = by_id.get(log.instance_id)
        if task is None:
            report = InstanceReport(instance_id=log.instance_id, model_name_or_path=model or log.model or "unknown",
                                    status=InstanceStatus.ERROR,
                                    reason="instance not in the dataset: its test lists are unknown")
        else:
            report = regrade_log(log, task, strict=strict, rule=chosen_rule, model=model,
                                 recipes_dir=recipes_dir, parser_name=parser_name)
        result.reports.append(report)
        group = (run_id or log.run_id or "regrade", report.model_name_or_path)
        groups.setdefault(group, []).append(report)
        if output_dir is not None:
            _write_report(output_dir, logs_dir, log, report)
    if output_dir is not None:

        for (group_run, group_model), reports in sorted(groups.items()):
            result.summaries.append(write_summary(
                reports, run_id=group_run, model=group_model, output_dir=output_dir,
                dataset_ids=[i for i in by_id if only is None or i in only], submitted_ids=[r.instance_id for r in reports]))
    return result


def _write_report(output_dir: Path, logs_dir: Path, log: FoundLog, report: InstanceReport) -> None:

    target = output_dir / log.instance_dir.relative_to(logs_dir)
    target.mkdir(parents=True, exist_ok=True)
    write_instance_result(target, report)
