"""One vocabulary for the command line: each shared option's name, short flag, older spellings,
meaning and default, written down once.

A verb builds a shared option with `option(NAME, ...)`; it may put words before or after the
shared meaning (what "instances" are for it, say), never change the meaning itself.
tests/unit/test_cli_vocabulary.py walks every verb and fails when one idea is spelled two ways,
or one name means two things.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import typer

_UNSET: Any = object()


@dataclass(frozen=True)
class Concept:
    name: str                       # the spelling --help and every message use
    meaning: str                    # the help every verb shows ("": each verb says what it means)
    short: str | None = None
    aliases: tuple[str, ...] = ()   # older spellings, still accepted where a verb keeps them
    default: Any = None             # the same on every verb, unless per_verb_default
    per_verb_default: bool = False


_CONCEPTS = [
    Concept("--dataset", "Tasks: .json/.jsonl/.parquet, a folder, 'demo', or a hub name.", short="-d",
            per_verb_default=True),
    Concept("--predictions", "Predictions (.jsonl/.json)", short="-p", per_verb_default=True),
    Concept("--instance-ids", "Only these instances: ids separated by commas or spaces, or the option "
            "repeated.", short="-i"),
    Concept("--output", "", short="-o", per_verb_default=True),
    Concept("--repos", "Folder of local clones: DIR/owner__name or DIR/owner/name.", aliases=("--repos-dir",)),
    Concept("--recipes", "A folder of environment recipes (TOML files, one per repository)."),
    Concept("--recipe", "One environment recipe: a TOML file of EnvSpec fields, as `issuebench setup -o` "
            "writes it."),
    Concept("--workers", "in parallel (default: the number of cores).", short="-w"),
    Concept("--test-timeout", "Seconds one test run may take", aliases=("--timeout",), per_verb_default=True),
    Concept("--command-timeout", "Seconds one shell command of the agent may run.", aliases=("--timeout",),
            default=60.0),
    Concept("--file-timeout", "Seconds the tests of one file may take in a judging run (pytest); a file cut "
            "for time is named and neither passes nor fails the environment (0: no limit).",
            per_verb_default=True),
    Concept("--setup-time-limit", "Seconds the whole setup search may take: no attempt starts past it and a "
            "running test run is cut", aliases=("--time-limit",), per_verb_default=True),
    Concept("--no-resume", "Redo what an earlier run already finished instead of reusing it",
            aliases=("--no-cache", "--rebuild", "--no-memory"), default=False),
    Concept("--no-sandbox", "Run without bubblewrap (unsafe: the code runs unconfined).", default=False),
    Concept("--offline", "Use no network: clone no repository, install packages only from the local cache.",
            default=False),
    Concept("--python-fallback", "error | nearest: without the task's Python, stop, or use the nearest "
            "installed one.", default="error"),
    Concept("--split", "Split to load from a folder or hub dataset.", default="test"),
    Concept("--strict", "Also count XFAIL/SKIPPED as FAIL_TO_PASS failures.", default=False),
    Concept("--flaky-reruns", "Times a run that passes every FAIL_TO_PASS test and fails only PASS_TO_PASS "
            "tests is run again; the best run gives the verdict and its notes name the flaky tests (0: grade "
            "each run once, as the reference does).", default=1),
    Concept("--setup-fallback", "When a task's recipe is missing, fails to build, or cannot run the tests on "
            "the unpatched base, use the recipe `issuebench setup` finds for its repository version "
            "(remembered; said in the results).", default=False),
    Concept("--install-system-deps", "Install the Debian packages the tasks' recipes need and this machine "
            "lacks (apt-get, as root) before running; without it, the verb stops and names them.",
            default=False),
    Concept("--model", "The model: its name at the endpoint --base-url names", short="-m"),
    Concept("--base-url", "OpenAI-compatible endpoint of --model (default: $OPENAI_BASE_URL)."),
    Concept("--model-name", "Model name for the reports (default: from the log path).", aliases=("--model",)),
    Concept("--prices", "A price table (TOML) instead of the shipped one."),
    Concept("--executor", "'local' (a pool on this machine) or 'ray' (a Ray cluster; needs "
            "`pip install issuebench\\[ray]`).", default="local"),
    Concept("--ray-address", "Ray head as host:port, or 'auto' (default with --executor ray: start a Ray "
            "instance on this machine for the run)."),
    Concept("--format", "", short="-f", default="table"),
    Concept("--run", "A run (a run summary or one system's run folder)"),
    Concept("--run-id", "", per_verb_default=True),
    Concept("--commit", "Commit of the clone (default HEAD)."),
    Concept("--date", "Resolve packages as of this ISO date"),
    Concept("--name", "owner/name of the repository (default: the name recorded in the clone, its origin, or "
            "its folder).", aliases=("--repo",)),
    Concept("--quiet", "No progress lines on stderr.", short="-q", default=False),
    Concept("--max-tasks", "Stop once this many tasks", aliases=("--max",)),
    Concept("--seed", "", default=0),
    Concept("--cache-dir", "The environments folder (default: the cache)."),
    Concept("--pass-threshold", "Share of counted tests that must pass.", aliases=("--threshold",),
            default=0.95),
    Concept("--swebench-version", "The swebench release to download when --from is absent.",
            aliases=("--version",), default="4.1.0"),
]
VOCABULARY: dict[str, Concept] = {c.name: c for c in _CONCEPTS}


def option(name: str, default: Any = _UNSET, *, before: str = "", after: str = "", keep: Sequence[str] = (),
           **typer_kwargs: Any) -> Any:
    """The shared option `name` as one verb declares it.

    before/after: the verb's own words around the shared meaning. keep: the older spellings
    (from the vocabulary) this verb still accepts, so command lines written for it keep working."""
    concept = VOCABULARY[name]
    unknown = set(keep) - set(concept.aliases)
    if unknown:  # a new spelling is a vocabulary change, made there
        raise ValueError(f"{name}: {sorted(unknown)} are not older spellings of it")
    if default is _UNSET:
        default = concept.default
    elif not concept.per_verb_default and default != concept.default:
        raise ValueError(f"{name}: the default is {concept.default!r} on every verb")
    names = [name, *keep] + ([concept.short] if concept.short else [])
    return typer.Option(default, *names, help=_join(before, concept.meaning, after), **typer_kwargs)


def _join(*parts: str) -> str:
    """Words joined by spaces, none before punctuation (`after` may start with ':' or ',')."""
    text = ""
    for part in (p for p in parts if p):
        text += part if not text or part[0] in ",.:;)" else " " + part
    return text


def split_ids(values: list[str] | None) -> list[str] | None:
    """`-i a,b`, `-i a -i b` and (through main's argv expansion) `-i a b` all mean [a, b]."""
    if not values:
        return None
    ids = [part.strip() for value in values for part in value.replace(",", " ").split()]
    return list(dict.fromkeys(i for i in ids if i)) or None


def instance_ids_option(after: str = "") -> Any:
    return option("--instance-ids", None, after=after, callback=split_ids)


def workers_option(what: str) -> Any:
    """`what`: what runs in parallel ("Instances", "Tasks validated")."""
    return option("--workers", None, before=what)


def resolve_workers(workers: int | None) -> int:
    """The one default of --workers: the number of cores."""
    return workers or os.cpu_count() or 1
