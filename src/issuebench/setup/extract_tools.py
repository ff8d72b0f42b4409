"""EXTRACT, part two: tox, nox, Makefiles, CI configurations and docs (test commands, Pythons,
test requirements)."""

from __future__ import annotations

import itertools
import re
import shlex
from typing import Any

import yaml

from issuebench.setup.ci_matrix import matrix_requirement_files, matrix_values
from issuebench.setup.facts import ALL_EXTRAS, DJANGO_TEST, Facts, ini, lines, versions
from issuebench.setup.pytest_config import read_pytest_section
from issuebench.setup.requirements import (
    clean_requirement,
    only_for_python,
    parse_requirements_text,
    python_of_path,
    requirement_extras,
    requirement_name,
    unquote,
)
from issuebench.setup.source import SourceTree

_COMMAND_KEYS = {"run", "script", "install", "before_install", "before_script", "command", "test_script",
                 "build_script", "commands", "steps"}
_TEST_CMD = re.compile(r"(\bpy\.?test\b|python\d?(\.\d+)? -m (pytest|unittest|nose)\b|\bnosetests\b|"
                       r"setup\.py test\b|\btrial\b|" + DJANGO_TEST.pattern + ")")
# Where a Django project's test command names its settings module.
_DJANGO_SETTINGS = re.compile(r"(?:\bDJANGO_SETTINGS_MODULE\s*=\s*|--settings[= ])[\"']?([A-Za-z_][\w.]*)")


def runs_tests(command: str) -> bool:
    """Whether a command line runs a Python test runner."""
    return bool(_TEST_CMD.search(command))


def _add_test_command(line: str, facts: Facts, context: str = "") -> None:
    """Record a test command line; `context` is text around it that may set its environment (a
    Makefile recipe's earlier lines, tox's setenv)."""
    facts.test_commands.append(line)
    if DJANGO_TEST.search(line) and facts.django_settings is None:
        found = _DJANGO_SETTINGS.search(line) or _DJANGO_SETTINGS.search(context)
        if found:
            facts.django_settings = found.group(1)


# tox factors that name a Python or the plain test run; any other factor (numpy, twisted, freeze,
# oldattrs, ...) marks a variant whose extra dependencies the ordinary test run does not need and
# whose pins (an old attrs, say) contradict the main run's.
_PLAIN_FACTOR = re.compile(r"^!?(py\d*|python\d*(\.\d+)?|test|tests|testing|unit|unittests?|cov|coverage|"
                           r"full|all|ci|\{[^}]*\})$")
_SKIP_ENV = re.compile(r"(lint|flake|docs|style|mypy|type|pep8|black|isort|format|release|build|pre-commit|"
                       r"bench|codspeed|pyright|changelog|readme|cog|spell|manifest|pypy)")


def read_tox(text: str, facts: Facts, tree: SourceTree) -> None:
    cfg = ini(text)
    if cfg.has_option("tox", "envlist"):
        facts.ci_pythons |= tox_env_versions(cfg.get("tox", "envlist"))
    if cfg.has_section("pytest"):
        read_pytest_section(cfg, "pytest", facts)
    envs = [s for s in cfg.sections() if s == "testenv" or (
        s.startswith("testenv:") and not _SKIP_ENV.search(s.split(":", 1)[1]))]
    plain = [s for s in envs if s == "testenv" or _plain(s.split(":", 1)[1])]
    # Variant environments only when the plain ones say nothing (some repositories have no base).
    chosen = plain if any(cfg.get(s, key, fallback="").strip() for s in plain
                          for key in ("deps", "commands")) else envs
    for section in chosen:
        for line in lines(cfg.get(section, "deps", fallback="")):
            line = _tox_unfactor(line)
            if line is None or line.startswith("{"):
                continue
            _add_requirement_token(line, facts, tree)
        facts.wanted_extras += [e.strip() for e in re.split(r"[,\s]+", cfg.get(section, "extras", fallback=""))
                                if e.strip() and _tox_unfactor(e.strip())]
        setenv = cfg.get(section, "setenv", fallback="")
        for line in lines(cfg.get(section, "commands", fallback="")):
            line = _tox_unfactor(line)
            if line and _TEST_CMD.search(line):
                line = re.sub(r"\{posargs[^}]*\}", "", line).replace("{envpython}", "python")
                _add_test_command(line, facts, setenv)


def _plain(factors: str) -> bool:
    """Do these tox factors (`py37-numpy`, `py3`) describe the plain test run?"""
    return all(_PLAIN_FACTOR.match(f) for f in re.split(r"-", factors) if f)


_PY2_OR_TOOLING = re.compile(r"(^|-)(py2\d*|pypy\w*|lint|docs)($|-)")


def _tox_unfactor(line: str) -> str | None:
    """Strip a tox factor condition; None for lines meant only for Python 2, lint, or a variant
    factor (`numpy: numpy`), i.e. when no alternative of the condition is a plain run."""
    match = re.match(r"^([\w.,!{}-]+):\s+(.*)$", line)
    if not match:
        return line
    # Braces first: `py{26}: unittest2` (python-ecdsa) is for Python 2.6 alone, as `py26:` is.
    alternatives = _expand_braces(match.group(1)).split(",")
    if all(_PY2_OR_TOOLING.search(alternative) for alternative in alternatives):
        return None
    if not any(_plain(alternative) for alternative in alternatives):
        return None
    return match.group(2)


def tox_env_versions(envlist: str) -> set[str]:
    out = set()
    for token in re.split(r"[,\s]+", _expand_braces(envlist)):
        match = re.match(r"^py(\d)(\d+)", token)
        if match:
            out.add(f"{match.group(1)}.{match.group(2)}")
    return out


def _expand_braces(text: str) -> str:
    match = re.search(r"([\w.-]*)\{([^{}]*)\}([\w.-]*)", text)
    if not match:
        return text
    pre, body, post = match.groups()
    expanded = ",".join(f"{pre}{part.strip()}{post}" for part in body.split(","))
    return _expand_braces(text[:match.start()] + expanded + text[match.end():])


# A call among `session.install`'s arguments (cibuildwheel's `*nox.project.dependency_groups(
# pyproject, "test")`): its strings are that function's arguments, not packages.
_NOX_CALL = re.compile(r"\*{0,2}[A-Za-z_][\w.]*\([^()]*\)")
# A keyword argument of `session.install` (scikit-build-core's `env={"PYTHONWARNINGS": "error"}`):
# its strings are no packages. It starts the call or follows a comma, never inside a string.
_NOX_KEYWORD = re.compile(r"""(^|,)\s*[A-Za-z_]\w*\s*=(?!=)\s*(?:\{[^{}]*\}|\[[^\[\]]*\]|"[^"]*"|'[^']*'|[\w.]+)""")


def read_noxfile(text: str, facts: Facts, tree: SourceTree) -> None:
    for match in re.finditer(r"python\s*=\s*(\[[^\]]*\]|\"[^\"]*\"|'[^']*')", text):
        facts.ci_pythons |= versions(match.group(1))
    for match in re.finditer(r"session\.install\(((?:[^()]|\([^()]*\))*)\)", text):
        arguments = _NOX_KEYWORD.sub(r"\1", _NOX_CALL.sub("", match.group(1)))
        for token in re.findall(r"[\"']([^\"']+)[\"']", arguments):
            _add_requirement_token(token, facts, tree)
    for match in re.finditer(r"session\.run\(([^)]*)\)", text):
        words = re.findall(r"[\"']([^\"']+)[\"']", match.group(1))
        # One argument each: `"-m", "not hdfs"` stays one marker expression when read back.
        command = shlex.join(words)
        if _TEST_CMD.search(command):
            _add_test_command(command, facts)


# A recipe line that runs a Python script of the repository (`python scripts/x.py`, or through a
# variable or `uv run`: `$(UV_RUN_CMD) scripts/l10n/generate_mo_files.py`).
_PREPARE_SCRIPT = re.compile(r"^(?:python[\d.]*\s+|\$\(\w+\)\s+|uv run\s+(?:--[\w-]+\s+)*)"
                             r"((?:[\w.-]+/)*[\w.-]+\.py)(?:\s|$)")


def read_makefile(text: str, facts: Facts, tree: SourceTree) -> None:
    _read_recipes(text, facts, tree, indents=("\t",))


def read_justfile(text: str, facts: Facts, tree: SourceTree) -> None:
    """django-tasks' CI runs `just test`, whose recipe is `python -m manage test --noinput {{ ARGS }}`:
    recipe lines are indented with spaces too, and `{{ ARGS }}` are its arguments."""
    _read_recipes(text, facts, tree, indents=(" ", "\t"))


def _read_recipes(text: str, facts: Facts, tree: SourceTree, indents: tuple[str, ...]) -> None:
    """A task runner's recipes: their test commands, and the repository's own Python scripts a test
    recipe runs before its tests, which prepare them (holidays compiles its .mo catalogs, which its
    localisation tests read). A line continued with a backslash is one command
    (`DJANGO_SETTINGS_MODULE=x` and a backslash, then `python -m django test` on the next line)."""
    recipe: list[str] = []
    for line in re.sub(r"\\\n\s*", " ", text).splitlines():
        if line[:1] not in indents:
            recipe = [] if line.strip() and not line.startswith("#") else recipe
            continue
        command = re.sub(r"\{\{[^}]*\}\}", "", line).strip().lstrip("@-").strip()
        if _TEST_CMD.search(line):
            _add_test_command(command, facts)
            facts.test_prepare += [m.group(1) for m in map(_PREPARE_SCRIPT.match, recipe)
                                   if m and tree.exists(m.group(1)) and m.group(1) not in facts.test_prepare]
        recipe.append(command)


# The task runners' files, each read for its test commands (beside tox, CI and docs).
TOOL_READERS = [("noxfile.py", read_noxfile), ("Makefile", read_makefile), ("justfile", read_justfile),
                ("Justfile", read_justfile)]


# -- CI and docs ----------------------------------------------------------------------------

def read_ci(path: str, text: str, facts: Facts, tree: SourceTree) -> None:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        facts.notes.append(f"{path}: not YAML ({str(exc)[:80]})")
        return
    commands: list[str] = []
    _walk_ci(data, facts, commands, key="")
    matrix = matrix_values(data)
    for command in commands:
        for line in command.splitlines():
            _read_command_line(line.strip(), facts, tree, matrix)


def _walk_ci(node: Any, facts: Facts, commands: list[str], key: str) -> None:
    lowered = key.lower()
    if isinstance(node, dict):
        if _elsewhere(node):
            return
        for k, v in node.items():
            _walk_ci(v, facts, commands, str(k))
    elif isinstance(node, list):
        for item in node:
            _walk_ci(item, facts, commands, key)
    elif isinstance(node, (str, int, float)):
        if "python" in lowered and "pypy" not in str(node).lower():
            facts.ci_pythons |= versions(node)
        elif lowered in ("toxenv", "tox_env", "tox-env"):
            facts.ci_pythons |= tox_env_versions(str(node))
        if isinstance(node, str):
            image = re.search(r"\bpython:(\d\.\d+)", node)
            if image:
                facts.ci_pythons.add(image.group(1))
            if lowered in _COMMAND_KEYS:
                commands.append(node)


def _elsewhere(step: dict) -> bool:
    """Does this CI step or job run in another folder than the repository's root? typing_extensions
    tests other projects against itself: a job clones pycroscope and, with `working-directory:
    pycroscope`, installs `pycroscope[tests] @ .`; those are that project's packages, not its own."""
    folder = step.get("working-directory", step.get("working_directory"))
    if folder is None and isinstance(step.get("defaults"), dict):
        run = step["defaults"].get("run")
        folder = run.get("working-directory") if isinstance(run, dict) else None
    return isinstance(folder, str) and folder.strip().rstrip("/") not in ("", ".", "${{ github.workspace }}")


def _read_command_line(line: str, facts: Facts, tree: SourceTree, matrix: dict[str, list[str]]) -> None:
    # A shell comment is prose (zope.interface's CI: "# ... (pip install uses a random temporary
    # directory, making this difficult)."): none of its words is a package.
    line = re.split(r"(?:^|\s)#", line.lstrip("$ ").strip(), maxsplit=1)[0].strip()
    pip = re.search(r"\bpip3?\s+install\s+(.*)$", line)
    if pip:
        for path in matrix_requirement_files(pip.group(1), tree, matrix):
            _add_requirement_token("-r " + path, facts, tree)
        # A CI variable (`sympy-${{ env.release_version }}`) names nothing installable here.
        words = re.sub(r"\S*\$\{\{[^}]*\}\}\S*|\S*\$\{?\w+\}?\S*", " ", pip.group(1).split(" #", 1)[0])
        tokens = _shell_words(words)
        skip_next = False
        for i, token in enumerate(tokens):
            if skip_next:
                skip_next = False
                continue
            if token in ("-r", "--requirement") and i + 1 < len(tokens):
                _add_requirement_token("-r " + tokens[i + 1], facts, tree)
            if token in _PIP_VALUE_OPTIONS:
                skip_next = True   # `--group test` names a group, `-i URL` an index: no package
                continue
            if token == "-e":
                continue
            if token.startswith("-") or not token:
                continue
            # A CI job's exact pin belongs to that job's Python and matrix, not to the date's
            # environment (sympy's CI pins numpy==1.18.5, which has no wheel for the Python chosen).
            _add_requirement_token(re.sub(r"^([A-Za-z0-9][\w.\[\],-]*)\s*==\s*[^;\s]+", r"\1", unquote(token)),
                                   facts, tree)
        return
    facts.wanted_extras += manager_extras(line)
    if line and _TEST_CMD.search(line):
        _add_test_command(line, facts)
    script = _REPO_SCRIPT.search(line)
    if script and tree.exists(script.group(1)) and not _SERVICE_SCRIPT.search(script.group(1)):
        read_test_script(tree.read(script.group(1)) or "", facts)


# A CI step that runs a shell script of the repository (`./scripts/test-sqlite.sh`, `bash ci/test.sh`).
_REPO_SCRIPT = re.compile(r"^(?:(?:ba)?sh\s+)?(?:\./)?((?:[\w.-]+/)*[\w.-]+\.sh)\b")
# A script named for a database server or a whole-system run is not read: its variables and
# options (piccolo's `PICCOLO_CONF="tests.postgres_conf"`, `-m integration`) are for a server no
# sandbox runs.
_SERVICE_SCRIPT = re.compile(r"(postgres|mysql|maria|mongo|redis|cockroach|integration|e2e|docker)", re.IGNORECASE)
_SANDBOX_OWN = {"PATH", "HOME", "TMPDIR", "PWD", "SHELL", "USER", "LANG", "LC_ALL"}   # the sandbox sets these
_EXPORT = re.compile(r"^export\s+([A-Za-z_]\w*)=(?:\"([^\"$`]*)\"|'([^']*)'|([^\s\"'$`;&|]*))\s*$")


def read_test_script(text: str, facts: Facts) -> None:
    """A repository's test script: its test commands, and the variables it exports before them
    with a literal value, which the tests need (piccolo: `export PICCOLO_CONF="tests.sqlite_conf"`)."""
    exports: dict[str, str] = {}
    for line in re.sub(r"\s*\\\n\s*", " ", text).splitlines():
        line = line.strip()
        found = _EXPORT.match(line)
        if found and found.group(1) not in _SANDBOX_OWN:
            exports[found.group(1)] = next(v for v in found.groups()[1:] if v is not None)
        elif _TEST_CMD.search(line) and not line.startswith("#"):
            _add_test_command(line, facts, "\n".join(f"{k}={v}" for k, v in exports.items()))
            facts.test_env = {**facts.test_env, **exports}


# A project manager's install of the project itself, whose options name the extras it takes.
_MANAGER_INSTALL = re.compile(r"\b(?:poetry\s+install|uv\s+sync|pdm\s+(?:install|sync))\b(.*)$")


def manager_extras(line: str) -> list[str]:
    """The extras a `poetry install --all-extras`, `-E name`, `uv sync --extra name` takes
    (ALL_EXTRAS for all): openapi-core's CI installs every extra, whose tests import fastapi."""
    found = _MANAGER_INSTALL.search(line)
    if not found:
        return []
    words, extras = _shell_words(found.group(1)), []
    for i, word in enumerate(words):
        option, _, value = word.partition("=")
        if word == "--all-extras":
            extras.append(ALL_EXTRAS)
        elif option in ("-E", "--extras", "--extra") and (value or i + 1 < len(words)):
            extras += [e for e in re.split(r"[,\s]+", value or words[i + 1]) if e]
    return extras


# pip install's options that take the next word as their value.
_PIP_VALUE_OPTIONS = frozenset({
    "-r", "--requirement", "-c", "--constraint", "--group", "-i", "--index-url", "--extra-index-url",
    "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--platform", "--python-version",
    "--implementation", "--abi", "--only-binary", "--no-binary", "--upgrade-strategy", "--progress-bar",
    "--trusted-host", "--src", "--python", "--config-settings", "-C", "--global-option"})


def _shell_words(text: str) -> list[str]:
    """The words of a command line's first command as the shell splits them (`"pip >= 25.1"` is
    one word, a `;` inside quotes ends nothing); whitespace-split when its quotes do not pair up."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        return text.split("&&")[0].split(";")[0].split()
    return list(itertools.takewhile(lambda word: word.strip(";&|") != "", words))


def read_docs(path: str, text: str, facts: Facts) -> None:
    excerpt = []
    for line in text.splitlines():
        stripped = line.strip().lstrip("$>").strip()
        if re.match(r"^(python\d?(\.\d+)? -m )?(pytest|py\.test|pip install|tox|nox|make test|python setup\.py test|"
                    r"python -m unittest)\b", stripped):
            excerpt.append(stripped)
            pip_extras = re.search(r"pip install\s+(?:-e\s+)?['\"]?\.\[([^\]]+)\]", stripped)
            if pip_extras:
                facts.wanted_extras += [e.strip() for e in pip_extras.group(1).split(",")]
            if _TEST_CMD.search(stripped):
                facts.test_commands.append(stripped)
    if excerpt:
        facts.sources[path] = "\n".join(excerpt)[:2000]


# -- helpers --------------------------------------------------------------------------------

# A requirements file for building the documentation (`docs/requirements.txt`,
# `requirements-docs.txt`): a docs job's pins (sphinx's own, pip-compiled) are no test requirement.
_DOCS_FILE = re.compile(r"(^|[/_.-])docs?([/_.-]|$)", re.IGNORECASE)


def _add_requirement_token(token: str, facts: Facts, tree: SourceTree) -> None:
    token = unquote(token)
    include = re.match(r"^-r\s*(\S+)$", token)
    if include:
        path = include.group(1).replace("{toxinidir}/", "")
        if _DOCS_FILE.search(path):
            return
        body = tree.read(path)
        if body is not None:
            reqs, extras = parse_requirements_text(body, path, tree.read)
            facts.test_requires += only_for_python(reqs, python_of_path(path))
            facts.wanted_extras += extras
        return
    local = re.match(r"^(?:-e\s*)?\.?/?\.?(\[[^\]]+\])$|^\.\[[^\]]+\]$", token)
    if local or token.startswith(".["):
        facts.wanted_extras += requirement_extras("x" + token[token.index("["):])
        return
    at_path = re.match(r"^[A-Za-z0-9][\w.-]*(\[[^\]]+\])?\s*@\s*(\.{1,2}(?:/\S*)?)$", token)
    if at_path:
        # `name[extras] @ .` is the project itself; `name @ ../other` a folder beside the clone
        # that no environment here has.
        if at_path.group(2).rstrip("/") == "." and at_path.group(1):
            facts.wanted_extras += requirement_extras("x" + at_path.group(1))
        return
    req = clean_requirement(token)
    if req and requirement_name(req) not in (None, "pip", "setuptools", "wheel"):
        facts.test_requires.append(req)


