"""The generators, by name, and `mutate_range` for callers that want bugs in given lines."""

from __future__ import annotations

from issuebench.synth.base import AstMutator, Candidate, Generator
from issuebench.synth.generators.calls import DropCall, SwapArguments
from issuebench.synth.generators.combine import Combine
from issuebench.synth.generators.conditions import InvertCondition
from issuebench.synth.generators.constants import ChangeConstant
from issuebench.synth.generators.model_rewrite import ModelRewrite
from issuebench.synth.generators.operators import FlipOperator, SwapOperands
from issuebench.synth.generators.pr_mirror import PRMirror
from issuebench.synth.generators.removal import (
    RemoveAssignment,
    RemoveConditional,
    RemoveLoop,
    RemoveReturn,
    RemoveWrapper,
)
from issuebench.synth.generators.shuffle import ShuffleStatements
from issuebench.synth.source import functions, in_range

PROCEDURAL: list[type[AstMutator]] = [FlipOperator, SwapOperands, ChangeConstant, InvertCondition,
                                      RemoveConditional, RemoveLoop, RemoveAssignment, RemoveReturn,
                                      RemoveWrapper, SwapArguments, DropCall, ShuffleStatements]
OTHERS: list[type] = [Combine, PRMirror, ModelRewrite]
REGISTRY: dict[str, type] = {cls.name: cls for cls in [*PROCEDURAL, *OTHERS]}
DEFAULT = [cls.name for cls in PROCEDURAL] + ["combine", "pr_mirror"]


def get_generators(names: list[str] | None) -> list[Generator]:
    """Generators by name (default: every procedural one, combinations and PR mirror)."""
    chosen = names or DEFAULT
    unknown = [n for n in chosen if n not in REGISTRY]
    if unknown:
        raise KeyError(", ".join(unknown))
    return [REGISTRY[n]() for n in chosen]


def mutate_range(path: str, source: str, start: int, end: int, names: list[str] | None = None) -> list[Candidate]:
    """Every procedural bug in the functions of `source` that overlap lines start..end.

    For callers outside synth (auditing a gold patch's strength mutates the code the patch changed).
    Syntax errors and no-op mutants are left out.
    """
    mutators = [REGISTRY[n]() for n in (names or [c.name for c in PROCEDURAL])
                if issubclass(REGISTRY[n], AstMutator)]
    out = []
    for fn in functions(path, source):
        if not in_range(fn, start, end):
            continue
        for mutator in mutators:
            out += [c for c in mutator.mutate_function(fn) if c.problem() is None]
    return out


__all__ = ["DEFAULT", "PROCEDURAL", "REGISTRY", "get_generators", "mutate_range"]
