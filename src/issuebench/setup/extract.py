"""EXTRACT: read a repository's metadata, CI and docs into `Facts` (no model, no execution).

Each reader takes the file text and fills part of Facts; a file that does not parse is noted and
skipped, never fatal, because old repositories hold all kinds of half-valid configuration.
Packaging metadata is read here; tox, nox, Makefiles, CI and docs in `extract_tools`.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from issuebench.setup.django_manage import read_manage_py
from issuebench.setup.dynamic_metadata import read_hatch_metadata_hooks, read_setuptools_dynamic
from issuebench.setup.extract_tools import TOOL_READERS, read_ci, read_docs, read_tox, runs_tests
from issuebench.setup.facts import TEST_EXTRAS, Facts, classifier_versions, ini, lines, strings
from issuebench.setup.gitmodules import read_gitmodules
from issuebench.setup.local_packages import local_path, path_dependency, read_uv_packages
from issuebench.setup.pytest_config import read_pyproject_pytest, read_pytest_section
from issuebench.setup.requirements import only_for_python, parse_requirements_text, python_of_path
from issuebench.setup.source import SourceTree

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["Facts", "extract"]

_REQ_FILE = re.compile(
    r"(^|/)((requirements|reqs)[-_.]?(test|tests|testing|dev|develop|ci)[^/]*|"
    r"(test|tests|testing|dev|ci)[-_.]?(requirements|reqs)[^/]*|"
    r"requirements/(test|tests|testing|dev|ci)[^/]*|(test|tests|testing)/requirements[^/]*)\.(txt|in)$")
_DEV_REQUIREMENTS = re.compile(r"^\s*(-e\s+)?\.(\[[^\]]*\])?\s*$|^\s*(pytest|nose2?|tox)\b",
                               re.MULTILINE | re.IGNORECASE)
# Composite actions hold install steps as workflows do (nonebot2's `uv sync --all-extras`).
_CI_FILES = re.compile(
    r"^(\.github/workflows/[^/]+\.ya?ml|\.github/actions/[^/]+/action\.ya?ml|\.travis\.ya?ml|azure-pipelines\.ya?ml|\.azure-pipelines/[^/]+\.ya?ml|"
    r"\.circleci/config\.ya?ml|\.gitlab-ci\.ya?ml|appveyor\.ya?ml|\.appveyor\.ya?ml)$")
_DOC_FILES = re.compile(r"^(README|CONTRIBUTING|HACKING|DEVELOPMENT|docs/contributing|docs/development)[^/]*$",
                        re.IGNORECASE)


def extract(tree: SourceTree) -> Facts:
    """Read every source of setup facts the snapshot has."""
    facts = Facts()
    files = tree.files()
    readers = [
        ("pyproject.toml", _read_pyproject),
        ("setup.cfg", _read_setup_cfg),
        ("setup.py", _read_setup_py),
        ("tox.ini", read_tox),
        ("pytest.ini", _read_pytest_ini),
        *TOOL_READERS,
    ]
    for path, reader in readers:
        text = tree.read(path) if path in files else None
        if text is None:
            continue
        facts.sources[path] = text[:6000]
        try:
            reader(text, facts, tree)
        except Exception as exc:  # a broken config file is a fact to note, not a crash
            facts.notes.append(f"{path}: not parsed ({type(exc).__name__}: {str(exc)[:120]})")
    for path in files:
        if _REQ_FILE.search(path) and "/site-packages/" not in path:
            _read_requirements_file(path, facts, tree)
        elif _CI_FILES.match(path):
            text = tree.read(path)
            if text is not None:
                facts.sources[path] = text[:4000]
                read_ci(path, text, facts, tree)
        elif _DOC_FILES.match(path):
            text = tree.read(path)
            if text is not None:
                read_docs(path, text, facts)
    if "requirements.txt" in files:
        text = tree.read("requirements.txt") or ""
        if _DEV_REQUIREMENTS.search(text):
            # Installs the project itself or a test runner: the developers' file (starlette's
            # `-e .[full]` beside pytest and trio, read by scripts/install), not the runtime's.
            _read_requirements_file("requirements.txt", facts, tree)
        elif not facts.install_requires and not facts.has_pyproject_build:
            facts.install_requires += parse_requirements_text(text, "requirements.txt", tree.read)[0]
    if ".gitmodules" in files:
        read_gitmodules(tree.read(".gitmodules") or "", facts, files, tree.read("setup.py") or "")
    facts.test_commands = list(dict.fromkeys(c.strip() for c in facts.test_commands))
    read_manage_py(facts, tree)
    if "conftest.py" in files or any(p.endswith("/conftest.py") for p in files):
        facts.pytest_configured = True
    return facts


# -- metadata files -------------------------------------------------------------------------

def _read_pyproject(text: str, facts: Facts, tree: SourceTree) -> None:
    """The standard tables first (build-system, project, dependency-groups), then each tool's:
    setuptools' dynamic files, pytest's options, poetry, hatch, pdm and tox's legacy ini."""
    data = tomllib.loads(text)
    _read_build_system(data.get("build-system", {}), facts)
    _read_project(data, facts)
    read_hatch_metadata_hooks(data, facts, tree)
    tool = data.get("tool", {})
    read_setuptools_dynamic(tool, facts, tree)
    read_pyproject_pytest(tool.get("pytest"), facts)
    _read_poetry(tool.get("poetry", {}), facts)
    _read_other_tools(tool, facts, tree)


def _read_build_system(build: dict[str, Any], facts: Facts) -> None:
    if build:
        facts.has_pyproject_build = True
        facts.build_backend = build.get("build-backend")
        facts.build_requires += [r for r in build.get("requires", []) if isinstance(r, str)]


def _read_project(data: dict[str, Any], facts: Facts) -> None:
    project = data.get("project", {})
    facts.name = facts.name or project.get("name")
    if project.get("requires-python"):
        facts.requires_python.append(project["requires-python"])
    facts.install_requires += [r for r in project.get("dependencies", []) if isinstance(r, str)]
    for extra, reqs in project.get("optional-dependencies", {}).items():
        facts.extras.setdefault(extra, []).extend(r for r in reqs if isinstance(r, str))
    facts.classifier_pythons |= classifier_versions(project.get("classifiers", []))
    groups = data.get("dependency-groups", {})
    for group in groups:
        if group.lower() in TEST_EXTRAS:
            facts.test_requires += _group_requirements(groups, group, set())


def _group_requirements(groups: dict[str, Any], name: str, seen: set[str]) -> list[str]:
    """A dependency group's requirements with its `{include-group = ...}` entries expanded (PEP 735):
    pypa/build's `test` group names pytest-rerunfailures only through `test-core`, and without it
    every test module its `flaky` marker decorates failed to collect."""
    if name in seen or not isinstance(groups.get(name), list):
        return []
    seen.add(name)
    found: list[str] = []
    for entry in groups[name]:
        if isinstance(entry, str):
            found.append(entry)
        elif isinstance(entry, dict) and isinstance(entry.get("include-group"), str):
            found += _group_requirements(groups, entry["include-group"], seen)
    return found


def _read_poetry(poetry: dict[str, Any], facts: Facts) -> None:
    if not poetry:
        return
    facts.name = facts.name or poetry.get("name")
    deps = dict(poetry.get("dependencies", {}))
    if "python" in deps:
        facts.requires_python.append(_poetry_spec(deps.pop("python")))
    facts.install_requires += [_poetry_req(n, v) for n, v in deps.items() if not _optional(v)]
    dev = dict(poetry.get("dev-dependencies", {}))
    for group, body in poetry.get("group", {}).items():
        if group.lower() in TEST_EXTRAS:
            dev.update(body.get("dependencies", {}))
    facts.local_packages += [local_path(v["path"]) for v in dev.values() if path_dependency(v)]
    facts.test_requires += [_poetry_req(n, v) for n, v in dev.items() if not path_dependency(v)]
    # An extra names optional dependencies; their versions are in the dependencies table.
    optional = {n.lower(): _poetry_req(n, v) for n, v in deps.items() if _optional(v)}
    for extra, names in poetry.get("extras", {}).items():
        facts.extras.setdefault(extra, []).extend(optional.get(str(n).lower(), str(n)) for n in names)


def _read_other_tools(tool: dict[str, Any], facts: Facts, tree: SourceTree) -> None:
    """hatch's test environments, pdm's dev groups, tox's ini kept in the pyproject."""
    envs = tool.get("hatch", {}).get("envs", {})
    for env in ("test", "tests", "default"):
        hatch = envs.get(env, {})
        facts.test_requires += [r for r in hatch.get("dependencies", []) if isinstance(r, str)]
        facts.wanted_extras += hatch.get("features", [])
    facts.test_commands += _hatch_test_commands(envs)
    for group, reqs in tool.get("pdm", {}).get("dev-dependencies", {}).items():
        if group.lower() in TEST_EXTRAS:
            facts.test_requires += [r for r in reqs if isinstance(r, str)]
    legacy = tool.get("tox", {}).get("legacy_tox_ini")
    if legacy:
        read_tox(legacy, facts, tree)
    read_uv_packages(tool.get("uv", {}), facts, tree)


def _hatch_test_commands(envs: dict[str, Any]) -> list[str]:
    """The test commands among hatch's scripts, the repository's own (mkdocs: `python -m unittest
    discover -s mkdocs -p "*tests.py"`)."""
    commands = []
    for env in envs.values():
        scripts = env.get("scripts", {}) if isinstance(env, dict) else {}
        for script in scripts.values() if isinstance(scripts, dict) else []:
            lines_ = [script] if isinstance(script, str) else script if isinstance(script, list) else []
            commands += [c for c in lines_ if isinstance(c, str) and runs_tests(c)]
    return commands


def _optional(value: Any) -> bool:
    return isinstance(value, dict) and bool(value.get("optional"))


def _poetry_spec(value: Any) -> str:
    """Poetry's ^/~ version syntax -> a PEP 440 specifier (lower bound is what matters here)."""
    if isinstance(value, dict):
        value = value.get("version", "*")
    text = str(value).strip()
    parts = []
    for piece in re.split(r"\s*,\s*|\s*\|\|\s*", text):
        if piece in ("*", ""):
            continue
        if piece[0] in "^~":
            parts.append(">=" + piece.lstrip("^~="))
        elif piece[0].isdigit():
            parts.append("==" + piece)
        else:
            parts.append(piece)
    return ",".join(parts)


def _poetry_req(name: str, value: Any) -> str:
    spec = _poetry_spec(value)
    extras = value.get("extras") if isinstance(value, dict) else None
    return name + (f"[{','.join(extras)}]" if extras else "") + spec


def _read_setup_cfg(text: str, facts: Facts, tree: SourceTree) -> None:
    cfg = ini(text)
    if cfg.has_option("metadata", "name"):
        facts.name = facts.name or cfg.get("metadata", "name")
    if cfg.has_option("metadata", "classifiers"):
        facts.classifier_pythons |= classifier_versions(cfg.get("metadata", "classifiers").splitlines())
    if cfg.has_section("options"):
        opts = cfg["options"]
        if opts.get("python_requires"):
            facts.requires_python.append(opts["python_requires"].strip())
        facts.install_requires += lines(opts.get("install_requires", ""))
        facts.test_requires += lines(opts.get("tests_require", ""))
        facts.setup_requires += lines(opts.get("setup_requires", ""))
    if cfg.has_section("options.extras_require"):
        for extra, value in cfg["options.extras_require"].items():
            facts.extras.setdefault(extra, []).extend(lines(value))
    for section in ("tool:pytest", "pytest"):
        if cfg.has_section(section):
            read_pytest_section(cfg, section, facts)


def _read_pytest_ini(text: str, facts: Facts, tree: SourceTree) -> None:
    facts.pytest_configured = True
    cfg = ini(text)
    if cfg.has_section("pytest"):
        read_pytest_section(cfg, "pytest", facts)


def _read_setup_py(text: str, facts: Facts, tree: SourceTree) -> None:
    facts.has_setup_py = True
    if "use_2to3" in text:
        facts.old_build.append("setup.py uses use_2to3 (removed in setuptools 58)")
    if re.search(r"from distutils(\.core)? import|import distutils", text):
        facts.old_build.append("setup.py imports distutils (removed in Python 3.12)")
    if "test_suite" in text:
        facts.unittest_suite = True
    module = ast.parse(text)
    env: dict[str, Any] = {}
    for node in ast.walk(module):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            value = _literal(node.value, env, tree)
            if isinstance(target, ast.Name) and value is not None:
                env[target.id] = value
            elif (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
                  and isinstance(env.get(target.value.id), dict)):
                key = _literal(target.slice, env, tree)
                if isinstance(key, str) and value is not None:
                    env[target.value.id][key] = value
    for node in ast.walk(module):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name != "setup":
            continue
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            value = _literal(kw.value, env, tree)
            if kw.arg is None and isinstance(value, dict):
                kwargs.update(value)
            elif kw.arg:
                kwargs[kw.arg] = value
        _apply_setup_kwargs(kwargs, facts)


def _apply_setup_kwargs(kwargs: dict[str, Any], facts: Facts) -> None:
    if isinstance(kwargs.get("name"), str):
        facts.name = facts.name or kwargs["name"]
    if isinstance(kwargs.get("python_requires"), str):
        facts.requires_python.append(kwargs["python_requires"])
    facts.install_requires += strings(kwargs.get("install_requires"))
    facts.test_requires += strings(kwargs.get("tests_require"))
    facts.setup_requires += strings(kwargs.get("setup_requires"))
    if isinstance(kwargs.get("extras_require"), dict):
        for extra, reqs in kwargs["extras_require"].items():
            if isinstance(extra, str) and ":" not in extra:
                facts.extras.setdefault(extra, []).extend(strings(reqs))
    facts.classifier_pythons |= classifier_versions(strings(kwargs.get("classifiers")))
    if kwargs.get("use_2to3"):
        facts.old_build.append("setup(use_2to3=True)")
    if kwargs.get("test_suite"):
        facts.unittest_suite = True


def _literal(node: ast.AST, env: dict[str, Any], tree: SourceTree) -> Any:
    """Best-effort value of an expression: literals, known names, list +, and open(req file)."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_literal(e, env, tree) for e in node.elts]
        return [i for i in items if i is not None]
    if isinstance(node, ast.Dict):
        out = {}
        for key, value in zip(node.keys, node.values, strict=True):
            k = _literal(key, env, tree) if key is not None else None
            v = _literal(value, env, tree)
            if k is None and isinstance(v, dict):
                out.update(v)
            elif isinstance(k, str) and v is not None:
                out[k] = v
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        # 'mpmath>=%s' % mpmath_version (sympy's setup.py)
        left, right = _literal(node.left, env, tree), _literal(node.right, env, tree)
        if isinstance(left, str) and isinstance(right, (str, int, float, tuple)):
            try:
                return left % right
            except (TypeError, ValueError):
                return None
    if isinstance(node, ast.JoinedStr):
        parts = [_literal(v.value, env, tree) if isinstance(v, ast.FormattedValue) else _literal(v, env, tree)
                 for v in node.values]
        return "".join(str(p) for p in parts) if all(isinstance(p, (str, int, float)) for p in parts) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left, env, tree), _literal(node.right, env, tree)
        if isinstance(left, list) and isinstance(right, list):
            return left + right
        return left if isinstance(left, list) else right if isinstance(right, list) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args:
        # opts = dict(name=NAME, install_requires=REQUIRES); setup(**opts)  (pydicom's setup.py)
        return {kw.arg: v for kw in node.keywords if kw.arg and (v := _literal(kw.value, env, tree)) is not None}
    if isinstance(node, ast.Call):
        # open("requirements.txt").read().splitlines(), read_requirements("req.txt"), ...
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and re.search(
                    r"req[^/]*\.(txt|in)$", sub.value):
                body = tree.read(sub.value)
                if body is not None:
                    return parse_requirements_text(body, sub.value, tree.read)[0]
    return None


def _read_requirements_file(path: str, facts: Facts, tree: SourceTree) -> None:
    text = tree.read(path)
    if text is None:
        return
    facts.sources[path] = text[:2000]
    reqs, extras = parse_requirements_text(text, path, tree.read)
    facts.test_requires += only_for_python(reqs, python_of_path(path))
    facts.wanted_extras += extras


