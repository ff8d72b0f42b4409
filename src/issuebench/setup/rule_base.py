"""What every setup rule shares: the Fix it returns, the context it reads, the registry by name
(`data/diagnose.toml`'s `fix` field) and the package edits most rules make."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from issuebench.setup.diagnose import Diagnosis
from issuebench.setup.extract import Facts
from issuebench.setup.plan import Plan
from issuebench.setup.requirements import requirement_name
from issuebench.setup.source import SourceTree


@dataclass
class Fix:
    plan: Plan
    description: str


@dataclass
class RuleContext:
    tree: SourceTree
    facts: Facts
    tried: set[str] = field(default_factory=set)          # descriptions already applied
    pythons_tried: set[str] = field(default_factory=set)


Rule = Callable[[Diagnosis, Plan, RuleContext], Fix | None]
_RULES: dict[str, Rule] = {}


def rule(func: Rule) -> Rule:
    _RULES[func.__name__] = func
    return func


def apply_rule(diagnosis: Diagnosis, plan: Plan, ctx: RuleContext) -> Fix | None:
    """The diagnosis's rule applied to plan, unless it gives nothing new."""
    func = _RULES.get(diagnosis.fix)
    if func is None:
        return None
    fix = func(diagnosis, plan, ctx)
    if fix is None or fix.description in ctx.tried:
        return None
    return fix


def with_packages(plan: Plan, add: list[str], what: str) -> Fix | None:
    have = {requirement_name(p) for p in plan.spec.packages}
    new = [p for p in add if requirement_name(p) not in have]
    if not new:
        return None
    return Fix(plan.copy(packages=[*plan.spec.packages, *new]), f"{what}: add {', '.join(new)}")


def replace_packages(plan: Plan, reqs: list[str], what: str) -> Fix | None:
    names = {requirement_name(r) for r in reqs}
    kept = [p for p in plan.spec.packages if requirement_name(p) not in names]
    if set(plan.spec.packages) >= set(reqs):
        return None
    return Fix(plan.copy(packages=[*kept, *reqs]), f"{what}: pin {', '.join(reqs)}")
