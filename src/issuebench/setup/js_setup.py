"""Set up a JavaScript/TypeScript repository at a commit: a "node" recipe from what the project
says (package.json's scripts and devDependencies, its lockfile, `engines`, `.nvmrc`), checked by
building the environment and running the suite once.

What is read, in order:
- the test runner: the one `scripts.test` names, else the first runner among the dependencies
  (jest, vitest, mocha, jasmine, karma); each with the reporter its parser reads;
- Node and the package manager: left to the node kind, which reads `.nvmrc`, `engines`, the
  lockfile and `packageManager` with the task's date (envs/node_tools.py);
- the install: the lockfile's frozen one (the node kind's default).
The recipe is accepted when the suite runs at the commit and some of its tests pass; the ones that
fail there are listed (tasks built on the recipe exclude them), as Python setup does.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

from issuebench.harness import create_workspace, ensure_env_with_overlay, remove_workspace
from issuebench.models import EnvSpec, TestStatus
from issuebench.parsers import get_parser
from issuebench.sandbox import Limits, get_sandbox
from issuebench.setup.loop import SetupResult

# runner -> (test command, log parser); the command's reporter is the one the parser reads.
RUNNERS: dict[str, tuple[str, str]] = {
    "jest": ("./node_modules/.bin/jest --verbose --no-color --ci", "jest"),
    "vitest": ("./node_modules/.bin/vitest run --reporter=verbose --no-color", "vitest"),
    "mocha": ("./node_modules/.bin/mocha -R tap", "tap"),
    # mocha over a webpack bundle of the tests (node-sql-parser): mocha's own options and reporters.
    "mochapack": ("./node_modules/.bin/mochapack --reporter tap", "tap"),
    "jasmine": ("./node_modules/.bin/jasmine --no-color", "marked"),
    "karma": ("./node_modules/.bin/karma start --single-run --no-colors", "karma"),
}
_PYTHON_FILES = ("setup.py", "pyproject.toml", "setup.cfg")


def _show(source: Path, commit: str, path: str) -> str | None:
    proc = subprocess.run(["git", "-C", str(source), "show", f"{commit}:{path}"], capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else None


def javascript_project(source: Path, commit: str) -> bool:
    """A package.json at the root and none of the files a Python project is set up from."""
    proc = subprocess.run(["git", "-C", str(source), "ls-tree", "--name-only", commit], capture_output=True, text=True)
    names = set(proc.stdout.split()) if proc.returncode == 0 else set()
    return "package.json" in names and not names.intersection(_PYTHON_FILES)


def choose_runner(package_json: dict[str, Any]) -> tuple[str | None, str]:
    """(the test runner, why), from scripts.test first, then the dependencies."""
    test_script = str((package_json.get("scripts") or {}).get("test") or "")
    for runner in RUNNERS:
        if re.search(rf"(^|[\s/&;]){runner}($|\s)", test_script):
            return runner, f"scripts.test runs {runner}"
    deps = {**(package_json.get("devDependencies") or {}), **(package_json.get("dependencies") or {})}
    for runner in RUNNERS:
        if runner in deps:
            return runner, f"{runner} is among the dependencies"
    return None, "no test runner named in scripts.test or the dependencies"


def runner_paths(test_script: str, runner: str, source: Path, commit: str) -> list[str]:
    """The paths scripts.test gives its runner (terser: `node test/compress.js && mocha test/mocha`):
    the suite the project runs, where the runner's default (mocha's ./test) finds another or none.
    Only words that name a path of the commit, or a glob; an option's value is neither."""
    for part in re.split(r"&&|\|\||;", test_script):
        try:
            words = shlex.split(part)
        except ValueError:
            continue
        at = next((i for i, word in enumerate(words) if word.rsplit("/", 1)[-1] == runner), None)
        if at is None:
            continue
        return [word for word in words[at + 1:] if not word.startswith("-") and
                ("*" in word or _show(source, commit, word.rstrip("/")) is not None)]
    return []


# A step scripts.test runs before its runner that builds what the tests import (node-sql-parser's
# `npm run build:pegjs`, the parsers generated from its grammar): a script of one of these names,
# or a compiler or bundler run; lint, format and type checks are left out, and so are other tests.
_BUILD_SCRIPT = re.compile(r"(build|generate|compile|codegen|prepare|pegjs|grammar|bundle)", re.IGNORECASE)
_BUILD_TOOLS = frozenset({"tsc", "babel", "webpack", "rollup", "gulp", "esbuild", "tsup", "vite"})
_RUN_SCRIPT = re.compile(r"^(?:npm run(?:-script)?|yarn(?: run)?|pnpm(?: run)?)\s+(\S+)")


def build_steps(test_script: str, runner: str) -> list[str]:
    """The build steps scripts.test runs before the part that starts `runner` ([] when no part
    does): the tests read what they make, and a patch to their sources needs them made again."""
    parts = [part.strip() for part in re.split(r"&&|;", test_script)]
    at = next((i for i, part in enumerate(parts) if _starts(part, runner)), None)
    if at is None:
        return []
    return [part for part in parts[:at] if _builds(part)]


def _starts(part: str, runner: str) -> bool:
    try:
        words = shlex.split(part)
    except ValueError:
        return False
    return any(word.rsplit("/", 1)[-1] == runner for word in words)


def _builds(part: str) -> bool:
    script = _RUN_SCRIPT.match(part)
    if script:
        return bool(_BUILD_SCRIPT.search(script.group(1))) and not re.search(r"lint|type|check|test", script.group(1))
    words = part.split()
    tool = words[0].rsplit("/", 1)[-1] if words else ""
    if tool == "npx" and len(words) > 1:
        tool = words[1]
    return tool in _BUILD_TOOLS and "--noEmit" not in words


def suite_paths(source: Path, commit: str) -> list[str]:
    """The paths scripts.test gives the runner setup chooses, at `commit` ([] when it names none)."""
    try:
        package_json = json.loads(_show(source, commit, "package.json") or "{}")
    except ValueError:
        return []
    if not isinstance(package_json, dict):
        return []
    runner = choose_runner(package_json)[0]
    test_script = str((package_json.get("scripts") or {}).get("test") or "")
    return runner_paths(test_script, runner, source, commit) if runner else []


def plan_spec(source: Path, commit: str) -> tuple[EnvSpec | None, str]:
    """The node recipe the project's own files give (None, with why, when they give none)."""
    text = _show(source, commit, "package.json")
    try:
        package_json = json.loads(text or "")
    except ValueError:
        return None, "package.json is not valid JSON"
    runner, why = choose_runner(package_json if isinstance(package_json, dict) else {})
    if runner is None:
        return None, why
    command, parser = RUNNERS[runner]
    steps = build_steps(str((package_json.get("scripts") or {}).get("test") or ""), runner)
    notes = [f"javascript setup: {why}"] + ([f"javascript setup: scripts.test builds first: {'; '.join(steps)}"]
                                             if steps else [])
    return EnvSpec(kind="node", test_cmd=command, log_parser=parser, test_directives="paths", pre_test=steps,
                   system_packages=["chromium"] if runner == "karma" else [], notes=notes), why


def setup_javascript(source: Path, *, commit: str, date: str | None = None, builder: Any = None,
                     sandbox: Any = None, repo_name: str | None = None, test_timeout: float = 1200.0) -> SetupResult:
    """The recipe for the repository at `commit`, built and its suite run once."""
    started = time.monotonic()
    repo = repo_name or source.name.replace("__", "/", 1)
    paths: list[str] = []
    suite: str | None = None

    def result(success: bool, spec: EnvSpec | None, reason: str, run: int = 0, passed: int = 0,
               failing: list[str] | None = None) -> SetupResult:
        return SetupResult(success, repo, commit, date, spec, spec.log_parser if spec else None, paths,
                           suite, run, passed, failing or [], [],
                           time.monotonic() - started, reason=reason)

    spec, why = plan_spec(source, commit)
    if spec is None:
        return result(False, None, why)
    # The whole suite as scripts.test names it; a task's run names its own test files instead.
    paths = suite_paths(source, commit)
    suite = " ".join([spec.test_cmd, *(shlex.quote(p) for p in paths)])
    spec = spec.model_copy(update={"exclude_newer": date})
    sandbox = sandbox or get_sandbox()
    ws = create_workspace(source, commit, repo=repo, when=date)
    try:
        env = ensure_env_with_overlay(builder, spec, ws)
        prep = builder.prepare_run(env, ws)
        run = sandbox.run(["bash", "-c", "\n".join([*spec.pre_test, suite])], workspace=ws, binds=prep.binds, env=prep.env,
                          limits=Limits(timeout=test_timeout), network=False)
    except Exception as exc:  # any build failure is this setup's answer, said in the reason
        return result(False, spec, f"the environment could not be built: {getattr(exc, 'message', exc)}")
    finally:
        remove_workspace(ws)
    statuses = get_parser(spec.log_parser)(run.output)
    passed = [name for name, status in statuses.items() if status is TestStatus.PASSED]
    failing = sorted(name for name, status in statuses.items() if status is not TestStatus.PASSED)
    if not passed:
        return result(False, spec, f"the suite ran no passing test at the commit (exit {run.returncode})",
                      len(statuses), 0, failing)
    return result(True, spec, why, len(statuses), len(passed), failing)
