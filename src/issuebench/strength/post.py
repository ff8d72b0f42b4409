"""`eval --wider-tests SCOPE`: the pass run after an evaluation, its summary section and its lines."""

from __future__ import annotations

from typing import Any

from issuebench.harness import EvalContext, add_wider_tests
from issuebench.models import InstanceStatus, Prediction, Task
from issuebench.strength.select import Scope
from issuebench.strength.wider import WiderResult, summary_section, wider_tests_pass


def after_eval(result, tasks: list[Task], predictions: list[Prediction], ctx: EvalContext, scope: Scope, *,
               workers: int = 1, on_result=None) -> dict[str, tuple[dict[str, Any], list[WiderResult]]]:
    """Run the pass over every model of an EvaluationResult; add its section to each model's summary."""
    out: dict[str, tuple[dict[str, Any], list[WiderResult]]] = {}
    for model in result.models:
        found = wider_tests_pass(model.reports, tasks, predictions, ctx, scope, workers=workers,
                                 on_result=on_result)
        resolved = [r.instance_id for r in model.reports if r.status is InstanceStatus.RESOLVED]
        section = summary_section(found, resolved, scope)
        if model.summary_path and model.summary_path.is_file():
            add_wider_tests(model.summary_path, section)
        out[model.model] = (section, found)
    return out


def lines(found: dict[str, tuple[dict[str, Any], list[WiderResult]]], total: dict[str, int]) -> list[str]:
    """What the terminal shows: the stricter rate beside the official one, and each breaking patch."""
    text: list[str] = []
    for model, (section, results) in found.items():
        n = total.get(model) or 0
        official = len(section["strict_resolved_ids"]) + len(section["breaking_ids"])
        strict = section["strict_resolved_instances"]
        text.append(f"{model}: resolved {official}/{n} ({_pct(official, n)}); without breaking wider tests "
                    f"{strict}/{n} ({_pct(strict, n)}) [{section['scope']}: {section['checked_instances']} checked, "
                    f"{len(section['unchecked_ids'])} not measurable, {len(section['skipped_ids'])} with nothing "
                    "beyond the graded lists]")
        for r in results:
            if r.breaking:
                shown = ", ".join(r.breaks[:5]) + (f" and {len(r.breaks) - 5} more" if len(r.breaks) > 5 else "")
                text.append(f"  {r.instance_id}: resolved, breaks {len(r.breaks)} other test(s): {shown}")
            elif r.status not in ("checked", "skipped"):
                text.append(f"  {r.instance_id}: not measured ({r.reason})")
    return text


def _pct(k: int, n: int) -> str:
    return f"{100 * k / n:.1f}%" if n else "n/a"
