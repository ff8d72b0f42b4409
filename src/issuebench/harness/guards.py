"""What keeps a model patch from deciding its own verdict.

The reference harness resets only the test files its test patch touches. A model patch can then add
a conftest.py that marks every test passed, edit another test file, name a pytest plugin in the
project's configuration, or print a fake summary after the runner's own. The guards here undo what a
patch did to tests, hooks and test-runner configuration, and cut the graded output at the runner's
own (last) closing line.
"""

from __future__ import annotations

import configparser
import fnmatch
import json
import re
import shlex
import sys
from pathlib import Path, PurePosixPath

from issuebench.harness.workspace import git, reset_paths
from issuebench.patch import is_test_path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# Files a model patch may not add or change anywhere: they run before or around the tests.
HOOK_FILE_PATTERNS = ("conftest.py", "sitecustomize.py", "usercustomize.py", "*.pth", "*.egg-link",
                      # pytest's own configuration files, first in its search order
                      "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml",
                      # JavaScript runners' configuration, found by name (a reporter there writes the results)
                      "jest.config.*", "vitest.config.*", "vitest.workspace.*", "karma.conf.*", ".mocharc*")
# Distribution metadata: pytest loads the `pytest11` entry points of every distribution it finds on
# sys.path, and the working folder is on it under `python -m pytest`.
METADATA_FOLDERS = ("*.dist-info", "*.egg-info")
# Files whose test-runner sections a patch may not change (the rest of the file is the patch's).
CONFIG_FILES = ("pyproject.toml", "setup.cfg", "tox.ini", "package.json")
# package.json's keys that say how the tests run: `npm test` runs scripts.test, jest reads "jest".
_PACKAGE_RUNNER_KEYS = ("scripts", "jest", "mocha", "ava", "c8", "nyc")


# Modules Python imports at start-up, before any test, when they are on the path: as a module, a
# package (`sitecustomize/__init__.py`), bytecode or an extension module alike.
HOOK_MODULES = ("sitecustomize", "usercustomize")
# Compiled Python: the patch scan cannot read it, an extension module is imported before the source
# beside it and a cached .pyc can stand in for a source file the guards put back; no fix ships one.
COMPILED_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd")
COMPILED_PATTERNS = tuple("*" + suffix for suffix in COMPILED_SUFFIXES)
# The file names a module can be imported from.
MODULE_SUFFIXES = (".py", *COMPILED_SUFFIXES)


def is_hook_file(path: str) -> bool:
    parts = PurePosixPath(path).parts
    if not parts:
        return False
    if "__pycache__" in parts or any(folder in HOOK_MODULES for folder in parts[:-1]):
        return True
    if any(fnmatch.fnmatch(folder, pattern) for folder in parts[:-1] for pattern in METADATA_FOLDERS):
        return True
    if any(fnmatch.fnmatch(parts[-1], pattern) for pattern in (*HOOK_FILE_PATTERNS, *COMPILED_PATTERNS)):
        return True
    if parts[-1] in HOOK_MODULES:   # a symlink to a folder imports as a package
        return True
    return parts[-1].split(".", 1)[0] in HOOK_MODULES and parts[-1].endswith(MODULE_SUFFIXES)


def _pytest_config(path: str, text: str | None) -> object:
    """The test-runner section of a config file, as data (None when absent or unreadable)."""
    if text is None:
        return None
    try:
        if path.endswith(".json"):
            data = json.loads(text)
            return {key: data.get(key) for key in _PACKAGE_RUNNER_KEYS} if isinstance(data, dict) else data
        if path.endswith(".toml"):
            return tomllib.loads(text).get("tool", {}).get("pytest")
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(text)
        for section in ("pytest", "tool:pytest"):
            if parser.has_section(section):
                return dict(parser.items(section))
    except (tomllib.TOMLDecodeError, configparser.Error, json.JSONDecodeError):
        return "<unreadable>"  # a broken config is a change too
    return None


def changed_runner_config(ws: Path, base_commit: str, files: list[str]) -> list[str]:
    """Config files among `files` whose pytest section differs from the base commit's."""
    changed = []
    for rel in files:
        if PurePosixPath(rel).name not in CONFIG_FILES:
            continue
        old = git(ws, "show", f"{base_commit}:{rel}", check=False)
        before = old.stdout if old.returncode == 0 else None
        target = ws / rel
        after = target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None
        if _pytest_config(rel, before) != _pytest_config(rel, after):
            changed.append(rel)
    return changed


# The file a build or test tool runs its targets from, when the test command starts with that tool.
_TOOL_FILES = {"make": ("GNUmakefile", "makefile", "Makefile"), "tox": ("tox.ini",), "nox": ("noxfile.py",)}


def runner_files(ws: Path, test_cmd: str) -> set[str]:
    """The repository's files the test command runs by name (sympy's `bin/test`, Django's
    `tests/runtests.py`): they are the test runner, and a patch that rewrites one writes its own results."""
    words = _words(test_cmd)
    found = {name for word in words for name in _TOOL_FILES.get(word, ()) if (ws / name).is_file()}
    for word in words:
        rel = word.removeprefix("./")
        if rel.startswith(("-", "/")) or "=" in rel or ".." in PurePosixPath(rel).parts or not rel:
            continue
        if (ws / rel).is_file():
            found.add(rel)
    return found


def _words(command: str, depth: int = 0) -> list[str]:
    """The command's words, and those of the commands quoted inside it (`su user -c "karma start
    ./karma.conf.js"`), without the shell's grouping and separators around them."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    out: list[str] = []
    for word in words:
        word = word.strip("()'\";&|")
        if depth < 2 and any(c.isspace() for c in word):
            out += _words(word, depth + 1)
        elif word:
            out.append(word)
    return out


# Top-level modules a patch may not define: the test runners' own and the standard library's, which
# a module in the working folder or a PYTHONPATH folder shadows (`python -m pytest` runs ./pytest/).
RUNNER_MODULES = frozenset({"pytest", "_pytest", "py", "pluggy", "iniconfig", "nose", "nose2", "xdist",
                            "pytest_cov", "coverage", *getattr(sys, "stdlib_module_names", ())})


def shadows_a_runner_module(ws: Path, path: str) -> bool:
    """Whether `path` defines a top-level module of RUNNER_MODULES: a module file or a regular
    package's `__init__`, in a folder that is not itself a package (so any folder put on sys.path)."""
    parts = PurePosixPath(path).parts
    for i, part in enumerate(parts):
        if i and (ws.joinpath(*parts[:i]) / "__init__.py").is_file():
            return False   # inside a package from here on: its modules are not top-level
        rest = parts[i + 1:]
        if not rest and part.endswith(MODULE_SUFFIXES):
            return part.split(".", 1)[0] in RUNNER_MODULES
        if not rest:   # a symlink named like the module, to a folder or a file, imports as that module
            return part in RUNNER_MODULES and ws.joinpath(*parts).is_symlink()
        if len(rest) == 1 and rest[0].split(".", 1)[0] == "__init__" and rest[0].endswith(MODULE_SUFFIXES):
            return part in RUNNER_MODULES
    return False


def _new_shadow(ws: Path, base_commit: str, path: str) -> bool:
    """A shadowing module the patch adds; one the base commit has is the project itself (a backport
    such as `typing` or `enum` is the repository's own module, and a fix may edit it)."""
    return shadows_a_runner_module(ws, path) and git(ws, "cat-file", "-e", f"{base_commit}:{path}",
                                                     check=False).returncode != 0


def undo_model_changes(ws: Path, base_commit: str, model_files: list[str], test_files: list[str],
                       runner: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Put back every test path, hook file, test-runner file, module shadowing the runner or the
    standard library, and runner config section the model touched."""

    suspicious = [p for p in model_files if p not in test_files
                  and (is_test_path(p) or is_hook_file(p) or p in runner or _new_shadow(ws, base_commit, p))]
    suspicious += changed_runner_config(ws, base_commit, [p for p in model_files if p not in suspicious])
    return reset_paths(ws, base_commit, suspicious)


# The runner's own closing lines. The runner speaks last: its closing line comes after all the
# output of the tests (pytest -rA shows what each test printed, then its short summary), and after
# the inner sessions that pytest's own tests print (pytester). So the graded text ends at the last
# closing line; what follows it (an exit handler of the code under test, say) is not the runner
# speaking. A closing line printed by the code under test while the tests run comes before the
# runner's own, and cannot end the graded text early.
_PYTEST_FINAL = re.compile(
    r"^=+ .*\b(passed|failed|errors?|skipped|xfailed|xpassed|deselected|no tests ran)\b.* in [\d.]+ ?(s|seconds)\b.*=+\s*$")
_UNITTEST_RAN = re.compile(r"^Ran \d+ tests? in [\d.]+s\s*$")
_UNITTEST_RESULT = re.compile(r"^(OK|FAILED)\b.*$")


# A closing line is short; longer lines are never matched, which keeps the scan linear.
_MAX_CLOSING_LINE = 400


def _closes(pattern: re.Pattern[str], line: str) -> bool:
    return len(line) <= _MAX_CLOSING_LINE and pattern.match(line) is not None


def cut_after_runner_summary(text: str) -> str:
    """The output up to the last closing line of pytest, or of unittest, if there is one."""
    lines = text.splitlines(keepends=True)
    for i in range(len(lines) - 1, -1, -1):
        if _closes(_PYTEST_FINAL, lines[i]):
            return "".join(lines[: i + 1])
    for i in range(len(lines) - 1, -1, -1):
        if _closes(_UNITTEST_RAN, lines[i]):
            for j in range(i + 1, min(i + 4, len(lines))):
                if _closes(_UNITTEST_RESULT, lines[j]):
                    return "".join(lines[: j + 1])
    return text


# Added code that reaches into the test runner or the process's output. A real fix to a library
# rarely needs any of it; a patch that fakes its own verdict from inside the run almost always does.
_SUSPICIOUS = [
    (re.compile(r"\b(TestCase|TestResult|TextTestResult|TestLoader|TextTestRunner|TestSuite)\.\w+\s*=(?!=)"),
     "reassigns a test-framework attribute"),
    (re.compile(r"\b(unittest|_pytest|pytest)(\.\w+)+\s*=(?!=)"), "reassigns a test-framework attribute"),
    (re.compile(r"setattr\(\s*\w*(unittest|pytest|TestCase|TestResult)"), "reassigns a test-framework attribute"),
    (re.compile(r"sys\.modules\[\s*['\"](unittest|pytest|_pytest)"), "replaces the test framework module"),
    (re.compile(r"\batexit\.register\b"), "registers an exit handler"),
    (re.compile(r"\bos\._exit\s*\("), "exits the process without cleanup"),
    (re.compile(r"\bos\.write\s*\(\s*[12]\s*,"), "writes straight to the output file descriptors"),
    (re.compile(r"sys\.__(stdout|stderr)__"), "writes to the original output streams"),
    (re.compile(r"/proc/(self|\d+|\{)"), "reads or writes process internals under /proc"),
]


def suspicious_lines(patch: str, *, skip_paths: tuple[str, ...] = ()) -> list[str]:
    """Reasons to look twice at a model patch: what its added lines do, with the line itself."""
    found: list[str] = []
    current = ""
    for line in (patch or "").splitlines():
        if line.startswith("+++ "):
            current = line[4:].strip().removeprefix("b/")
            continue
        if not line.startswith("+") or current in skip_paths:
            continue
        for pattern, why in _SUSPICIOUS:
            if pattern.search(line):
                found.append(f"{current}: {why}: {line[1:].strip()[:120]}")
                break
    return found
