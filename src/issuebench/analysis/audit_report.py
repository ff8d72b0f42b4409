"""`issuebench audit`: one document with the Lite rules, per-row findings and characteristics."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from issuebench.analysis.audit import (
    QualityFindings,
    RejectedFix,
    RuleOutcome,
    apply_lite_rules,
    quality_findings,
)
from issuebench.analysis.characteristics import (
    NEEDS_SOLUTION,
    CharacteristicCorrelation,
    Characteristics,
    characterize,
    correlate_with_success,
    means,
)
from issuebench.analysis.runs import RunResults
from issuebench.models import Task


@dataclass
class AuditReport:
    total: int
    lite_rules: list[RuleOutcome]
    kept_by_all_rules: list[str]
    rows: list[tuple[Characteristics, QualityFindings]]
    correlations: list[CharacteristicCorrelation] = field(default_factory=list)
    correlation_run: str | None = None
    rejected_alternatives: list[RejectedFix] | None = None

    def as_dict(self) -> dict[str, Any]:
        rows = []
        for ch, q in self.rows:
            d = ch.as_dict()
            d.update({k: v for k, v in q.as_dict().items() if k != "instance_id"})
            rows.append(d)
        out: dict[str, Any] = {
            "total": self.total,
            "lite_rules": [{"rule": o.rule, "description": o.description, "kept": o.kept,
                            "dropped": sorted(o.dropped), "why": o.dropped} for o in self.lite_rules],
            "kept_by_all_rules": len(self.kept_by_all_rules),
            "quality": {
                "too_narrow": sorted(q.instance_id for _, q in self.rows if q.too_narrow),
                "too_wide": sorted(q.instance_id for _, q in self.rows if q.too_wide),
                "underspecified_2_or_more": sorted(q.instance_id for _, q in self.rows
                                                   if q.underspecified_score >= 2),
            },
            "means": means([ch for ch, _ in self.rows]),
            "rows": rows,
        }
        if self.correlation_run is not None:
            out["correlation_run"] = self.correlation_run
            out["correlations"] = [asdict(c) for c in self.correlations]
        if self.rejected_alternatives is not None:
            out["rejected_alternatives"] = [asdict(r) for r in self.rejected_alternatives]
        return out


def audit_tasks(tasks: Sequence[Task], *, run: RunResults | None = None,
                rejected: list[RejectedFix] | None = None) -> AuditReport:
    rule_outcomes, kept = apply_lite_rules(tasks)
    rows = [(characterize(t), quality_findings(t)) for t in tasks]
    report = AuditReport(total=len(tasks), lite_rules=rule_outcomes, kept_by_all_rules=kept, rows=rows,
                         rejected_alternatives=rejected)
    if run is not None:
        resolved = {iid: r.resolved for iid, r in run.instances.items()}
        report.correlations = correlate_with_success([ch for ch, _ in rows], resolved)
        report.correlation_run = run.name
    return report


def audit_json(report: AuditReport) -> str:
    return json.dumps(report.as_dict(), indent=2)


def audit_text(report: AuditReport) -> str:
    lines = [f"{report.total} tasks", "", "Lite selection rules (each on its own):"]
    for o in report.lite_rules:
        lines.append(f"  {o.rule:<30} kept {o.kept:>5}  dropped {len(o.dropped)}")
        for iid, why in sorted(o.dropped.items()):
            lines.append(f"      - {iid}: {why}")
    lines.append(f"  kept by every rule: {len(report.kept_by_all_rules)} of {report.total}")
    lines += ["", "Verified-style checks (heuristics to point a reviewer at a task):"]
    narrow = [q for _, q in report.rows if q.too_narrow]
    wide = [q for _, q in report.rows if q.too_wide]
    vague = [q for _, q in report.rows if q.underspecified_score >= 2]
    lines.append(f"  tests too narrow (use names the fix introduces and the statement never mentions): {len(narrow)}")
    lines += [f"      - {q.instance_id}: {', '.join(q.narrow_introduced)}" for q in narrow]
    lines.append(f"  tests too wide (most FAIL_TO_PASS tests name nothing in the statement or fix): {len(wide)}")
    lines += [f"      - {q.instance_id}: {len(q.unrelated_f2p)} unrelated" for q in wide[:50]]
    lines.append(f"  underspecified (score >= 2 of 3): {len(vague)}")
    lines += [f"      - {q.instance_id} ({q.underspecified_score}): {'; '.join(q.underspecified_reasons)}"
              for q in vague[:50]]
    lines += ["", "Mean characteristics:"]
    lines += [f"  {k:<16} {v:10.2f}" for k, v in means([ch for ch, _ in report.rows]).items()]
    if report.correlation_run is not None:
        lines += ["", f"Spearman correlation with success ({report.correlation_run}):",
                  f"  {'characteristic':<16} {'rho':>7} {'p':>9}  needs the solution"]
        for c in report.correlations:
            rho = "n/a" if c.rho is None else f"{c.rho:+.3f}"
            p = "n/a" if c.p_value is None else f"{c.p_value:.3g}"
            lines.append(f"  {c.name:<16} {rho:>7} {p:>9}  {'yes' if c.name in NEEDS_SOLUTION else 'no'}")
    if report.rejected_alternatives is not None:
        lines += ["", f"Valid alternative fixes rejected by the tests: {len(report.rejected_alternatives)}"]
        lines += [f"  - {r.instance_id}: {r.status} {r.reason} {', '.join(r.failing_tests[:5])}".rstrip()
                  for r in report.rejected_alternatives]
    return "\n".join(lines) + "\n"
