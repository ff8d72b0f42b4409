"""The run's files, in the reference's layout. All report paths are built here and nowhere else.

OUTPUT/logs/run_evaluation/<run_id>/<model>/<instance_id>/
    patch.diff  eval.sh  test_output.txt  run_instance.log  report.json  result.json
OUTPUT/<model>.<run_id>.json

An instance's folder is written aside and put in place when it finishes (`finish_instance`, see
harness.staging): a run stopped while the instance is in flight leaves no folder for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from issuebench.files import write_json
from issuebench.harness import staging
from issuebench.interrupts import may_record
from issuebench.models import InstanceReport, InstanceStatus

RESULT_FILE = "result.json"  # our full record: status, reason, outcome, timings, env, cache key
REPORT_FILE = "report.json"  # the reference's shape, only for instances whose tests ran


def model_dir_name(model: str) -> str:
    return model.replace("/", "__")


@dataclass(frozen=True)
class RunLayout:
    output_dir: Path
    run_id: str

    def run_dir(self) -> Path:
        return self.output_dir / "logs" / "run_evaluation" / self.run_id

    def model_dir(self, model: str) -> Path:
        return self.run_dir() / model_dir_name(model)

    def instance_dir(self, model: str, instance_id: str) -> Path:
        return self.model_dir(model) / instance_id

    def summary_path(self, model: str) -> Path:
        return self.output_dir / f"{model_dir_name(model)}.{self.run_id}.json"


def write_instance_result(instance_dir: Path, report: InstanceReport) -> None:
    """Write report.json (reference shape, when tests ran) and then result.json (ours).

    result.json is written last: its presence marks the instance finished, which resume relies on.
    Once the run was interrupted nothing is written: the verdict may be the interrupt's doing.
    """
    with may_record() as allowed:
        if not allowed:
            return
        report_path = instance_dir / REPORT_FILE
        if report.status.completed:
            write_json(report_path, report.to_reference())
        else:
            report_path.unlink(missing_ok=True)
        write_json(instance_dir / RESULT_FILE, report.model_dump(mode="json"))


def finish_instance(work: Path, final: Path, report: InstanceReport) -> bool:
    """Write the verdict into the instance's staging folder `work` and put it in place of `final`.

    Both in one may_record: once the run was interrupted neither happens. Returns whether it did."""
    with may_record() as allowed:
        if not allowed:
            return False
        work.mkdir(parents=True, exist_ok=True)
        write_instance_result(work, report)
        return staging.publish(work, final)


def read_instance_result(instance_dir: Path) -> InstanceReport | None:
    path = instance_dir / RESULT_FILE
    if not path.is_file():
        return None
    try:
        return InstanceReport.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError:
        return None  # a result from an older or broken run: recompute


def error_statuses() -> set[InstanceStatus]:
    return {s for s in InstanceStatus if not s.completed and s is not InstanceStatus.EMPTY}
