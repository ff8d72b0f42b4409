"""EXTRACT: read a repository's metadata, CI and docs into `Facts` (no model, no execution).

Each reader takes the file text and fills part of Facts; a file that does not parse is noted and
skipped, never fatal, because old repositories hold all kinds of half-valid configuration.
"""

from __future__ import annotations

import ast
import configparser
import re
import sys
from dataclasses import dataclass, field
from typing import Any

import yaml

from issuebench.setup.requirements import (
    clean_requirement,
    parse_requirements_text,
    requirement_extras,
    requirement_name,
    unquote,
)
from issuebench.setup.source import SourceTree

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TEST_EXTRAS = ("test", "tests", "testing", "dev", "develop", "development", "ci")
_REQ_FILE = re.compile(
    r"(^|/)((requirements|reqs)[-_.]?(test|tests|testing|dev|develop|ci)[^/]*|"
    r"(test|tests|testing|dev|ci)[-_.]?(requirements|reqs)[^/]*|"
    r"requirements/(test|tests|testing|dev|ci)[^/]*|(test|tests|testing)/requirements[^/]*)\.(txt|in)$")
_CI_FILES = re.compile(
    r"^(\.github/workflows/[^/]+\.ya?ml|\.travis\.ya?ml|azure-pipelines\.ya?ml|\.azure-pipelines/[^/]+\.ya?ml|"
    r"\.circleci/config\.ya?ml|\.gitlab-ci\.ya?ml|appveyor\.ya?ml|\.appveyor\.ya?ml)$")
_DOC_FILES = re.compile(r"^(README|CONTRIBUTING|HACKING|DEVELOPMENT|docs/contributing|docs/development)[^/]*$",
                        re.IGNORECASE)
_VERSION = re.compile(r"(?<![\d.\w])([23])\.(\d{1,2})(?![\d])")
_COMMAND_KEYS = {"run", "script", "install", "before_install", "before_script", "command", "test_script",
                 "build_script", "commands", "steps"}
_TEST_CMD = re.compile(r"(\bpy\.?test\b|python\d?(\.\d+)? -m (pytest|unittest|nose)\b|\bnosetests\b|"
                       r"setup\.py test\b|\btrial\b)")


@dataclass
class Facts:
    """What a repository says about installing and testing itself."""

    name: str | None = None
    requires_python: list[str] = field(default_factory=list)     # specifier strings, all apply
    ci_pythons: set[str] = field(default_factory=set)              # "3.8" etc. from CI, tox, nox
    classifier_pythons: set[str] = field(default_factory=set)
    build_backend: str | None = None
    build_requires: list[str] = field(default_factory=list)
    has_setup_py: bool = False
    has_pyproject_build: bool = False
    install_requires: list[str] = field(default_factory=list)
    setup_requires: list[str] = field(default_factory=list)
    extras: dict[str, list[str]] = field(default_factory=dict)
    wanted_extras: list[str] = field(default_factory=list)        # extras a tox/CI/docs install names
    test_requires: list[str] = field(default_factory=list)        # tests_require, tox deps, CI installs
    test_commands: list[str] = field(default_factory=list)        # raw commands that run tests
    pytest_configured: bool = False
    pytest_testpaths: list[str] = field(default_factory=list)
    unittest_suite: bool = False
    old_build: list[str] = field(default_factory=list)            # signs that need an old setuptools
    sources: dict[str, str] = field(default_factory=dict)         # path -> excerpt (for a model)
    notes: list[str] = field(default_factory=list)

    @property
    def uses_pytest(self) -> bool:
        names = {requirement_name(r) for r in self.all_test_requirements()}
        return (self.pytest_configured or "pytest" in names
                or any(re.search(r"py\.?test", c) for c in self.test_commands))

    def all_test_requirements(self) -> list[str]:
        chosen = [e for e in self.extras if e.lower() in TEST_EXTRAS[:3]] or \
                 [e for e in self.extras if e.lower() in TEST_EXTRAS]
        reqs = list(self.test_requires)
        for extra in dict.fromkeys(chosen + [e for e in self.wanted_extras if e in self.extras]):
            reqs += self.extras[extra]
        return reqs


def extract(tree: SourceTree) -> Facts:
    """Read every source of setup facts the snapshot has."""
    facts = Facts()
    files = tree.files()
    readers = [
        ("pyproject.toml", _read_pyproject),
        ("setup.cfg", _read_setup_cfg),
        ("setup.py", _read_setup_py),
        ("tox.ini", _read_tox),
        ("pytest.ini", _read_pytest_ini),
        ("noxfile.py", _read_noxfile),
        ("Makefile", _read_makefile),
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
                _read_ci(path, text, facts, tree)
        elif _DOC_FILES.match(path):
            text = tree.read(path)
            if text is not None:
                _read_docs(path, text, facts)
    if not facts.install_requires and "requirements.txt" in files and not facts.has_pyproject_build:
        text = tree.read("requirements.txt") or ""
        facts.install_requires += parse_requirements_text(text, "requirements.txt", tree.read)[0]
    facts.test_commands = list(dict.fromkeys(c.strip() for c in facts.test_commands))
    if "conftest.py" in files or any(p.endswith("/conftest.py") for p in files):
        facts.pytest_configured = True
    return facts


# -- metadata files ---------------------------------------------------------------------------

def _read_pyproject(text: str, facts: Facts, tree: SourceTree) -> None:
    data = tomllib.loads(text)
    build = data.get("build-system", {})
    if build:
        facts.has_pyproject_build = True
        facts.build_backend = build.get("build-backend")
        facts.build_requires += [r for r in build.get("requires", []) if isinstance(r, str)]
    project = data.get("project", {})
    facts.name = facts.name or project.get("name")
    if project.get("requires-python"):
        facts.requires_python.append(project["requires-python"])
    facts.install_requires += [r for r in project.get("dependencies", []) if isinstance(r, str)]
    for extra, reqs in project.get("optional-dependencies", {}).items():
        facts.extras.setdefault(extra, []).extend(r for r in reqs if isinstance(r, str))
    facts.classifier_pythons |= _classifier_versions(project.get("classifiers", []))
    for group, reqs in data.get("dependency-groups", {}).items():
        if group.lower() in TEST_EXTRAS:
            facts.test_requires += [r for r in reqs if isinstance(r, str)]
    tool = data.get("tool", {})
    dynamic = tool.get("setuptools", {}).get("dynamic", {})
    for key, target in (("dependencies", facts.install_requires),):
        files = dynamic.get(key, {}).get("file", [])
        for path in [files] if isinstance(files, str) else files:
            body = tree.read(path)
            if body:
                target += parse_requirements_text(body, path, tree.read)[0]
    pytest_cfg = tool.get("pytest", {}).get("ini_options")
    if pytest_cfg is not None:
        facts.pytest_configured = True
        paths = pytest_cfg.get("testpaths", [])
        facts.pytest_testpaths += [paths] if isinstance(paths, str) else list(paths)
    poetry = tool.get("poetry", {})
    if poetry:
        facts.name = facts.name or poetry.get("name")
        deps = dict(poetry.get("dependencies", {}))
        if "python" in deps:
            facts.requires_python.append(_poetry_spec(deps.pop("python")))
        facts.install_requires += [_poetry_req(n, v) for n, v in deps.items() if not _optional(v)]
        dev = dict(poetry.get("dev-dependencies", {}))
        for group, body in poetry.get("group", {}).items():
            if group.lower() in TEST_EXTRAS:
                dev.update(body.get("dependencies", {}))
        facts.test_requires += [_poetry_req(n, v) for n, v in dev.items()]
        for extra, names in poetry.get("extras", {}).items():
            facts.extras.setdefault(extra, []).extend(names)
    for env in ("test", "tests", "default"):
        hatch = tool.get("hatch", {}).get("envs", {}).get(env, {})
        facts.test_requires += [r for r in hatch.get("dependencies", []) if isinstance(r, str)]
        facts.wanted_extras += hatch.get("features", [])
    for group, reqs in tool.get("pdm", {}).get("dev-dependencies", {}).items():
        if group.lower() in TEST_EXTRAS:
            facts.test_requires += [r for r in reqs if isinstance(r, str)]
    legacy = tool.get("tox", {}).get("legacy_tox_ini")
    if legacy:
        _read_tox(legacy, facts, tree)


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
    cfg = _ini(text)
    if cfg.has_option("metadata", "name"):
        facts.name = facts.name or cfg.get("metadata", "name")
    if cfg.has_option("metadata", "classifiers"):
        facts.classifier_pythons |= _classifier_versions(cfg.get("metadata", "classifiers").splitlines())
    if cfg.has_section("options"):
        opts = cfg["options"]
        if opts.get("python_requires"):
            facts.requires_python.append(opts["python_requires"].strip())
        facts.install_requires += _lines(opts.get("install_requires", ""))
        facts.test_requires += _lines(opts.get("tests_require", ""))
        facts.setup_requires += _lines(opts.get("setup_requires", ""))
    if cfg.has_section("options.extras_require"):
        for extra, value in cfg["options.extras_require"].items():
            facts.extras.setdefault(extra, []).extend(_lines(value))
    for section in ("tool:pytest", "pytest"):
        if cfg.has_section(section):
            facts.pytest_configured = True
            facts.pytest_testpaths += cfg.get(section, "testpaths", fallback="").split()


def _read_pytest_ini(text: str, facts: Facts, tree: SourceTree) -> None:
    facts.pytest_configured = True
    cfg = _ini(text)
    facts.pytest_testpaths += cfg.get("pytest", "testpaths", fallback="").split()


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
    facts.install_requires += _strings(kwargs.get("install_requires"))
    facts.test_requires += _strings(kwargs.get("tests_require"))
    facts.setup_requires += _strings(kwargs.get("setup_requires"))
    if isinstance(kwargs.get("extras_require"), dict):
        for extra, reqs in kwargs["extras_require"].items():
            if isinstance(extra, str) and ":" not in extra:
                facts.extras.setdefault(extra, []).extend(_strings(reqs))
    facts.classifier_pythons |= _classifier_versions(_strings(kwargs.get("classifiers")))
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
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left, env, tree), _literal(node.right, env, tree)
        if isinstance(left, list) and isinstance(right, list):
            return left + right
        return left if isinstance(left, list) else right if isinstance(right, list) else None
    if isinstance(node, ast.Call):
        # open("requirements.txt").read().splitlines(), read_requirements("req.txt"), ...
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and re.search(
                    r"req[^/]*\.(txt|in)$", sub.value):
                body = tree.read(sub.value)
                if body is not None:
                    return parse_requirements_text(body, sub.value, tree.read)[0]
    return None


def _read_tox(text: str, facts: Facts, tree: SourceTree) -> None:
    cfg = _ini(text)
    if cfg.has_option("tox", "envlist"):
        facts.ci_pythons |= _tox_env_versions(cfg.get("tox", "envlist"))
    if cfg.has_section("pytest"):
        facts.pytest_configured = True
        facts.pytest_testpaths += cfg.get("pytest", "testpaths", fallback="").split()
    for section in cfg.sections():
        if section != "testenv" and not section.startswith("testenv:"):
            continue
        if re.search(r"(lint|flake|docs|style|mypy|type|pep8|black|isort|format|release|build|pre-commit|"
                     r"bench|codspeed|pyright|changelog|readme|cog|spell|manifest|pypy)",
                     section.split(":", 1)[-1]) and section != "testenv":
            continue
        for line in _lines(cfg.get(section, "deps", fallback="")):
            line = _tox_unfactor(line)
            if line is None or line.startswith("{"):
                continue
            _add_requirement_token(line, facts, tree)
        facts.wanted_extras += [e.strip() for e in re.split(r"[,\s]+", cfg.get(section, "extras", fallback=""))
                                if e.strip() and _tox_unfactor(e.strip())]
        for line in _lines(cfg.get(section, "commands", fallback="")):
            line = _tox_unfactor(line)
            if line and _TEST_CMD.search(line):
                line = re.sub(r"\{posargs[^}]*\}", "", line).replace("{envpython}", "python")
                facts.test_commands.append(line)


def _tox_unfactor(line: str) -> str | None:
    """Strip a tox factor condition; None for lines meant only for Python 2 or lint factors."""
    match = re.match(r"^([\w.,!{}-]+):\s+(.*)$", line)
    if not match:
        return line
    factors = match.group(1)
    if re.search(r"(^|[,-])(py2\d?|py27|pypy|lint|docs)($|[,-])", factors) and "py3" not in factors:
        return None
    return match.group(2)


def _tox_env_versions(envlist: str) -> set[str]:
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


def _read_noxfile(text: str, facts: Facts, tree: SourceTree) -> None:
    for match in re.finditer(r"python\s*=\s*(\[[^\]]*\]|\"[^\"]*\"|'[^']*')", text):
        facts.ci_pythons |= _versions(match.group(1))
    for match in re.finditer(r"session\.install\(([^)]*)\)", text):
        for token in re.findall(r"[\"']([^\"']+)[\"']", match.group(1)):
            _add_requirement_token(token, facts, tree)
    for match in re.finditer(r"session\.run\(([^)]*)\)", text):
        words = re.findall(r"[\"']([^\"']+)[\"']", match.group(1))
        command = " ".join(words)
        if _TEST_CMD.search(command):
            facts.test_commands.append(command)


def _read_makefile(text: str, facts: Facts, tree: SourceTree) -> None:
    for line in text.splitlines():
        if line.startswith("\t") and _TEST_CMD.search(line):
            facts.test_commands.append(line.strip().lstrip("@-").strip())


def _read_requirements_file(path: str, facts: Facts, tree: SourceTree) -> None:
    text = tree.read(path)
    if text is None:
        return
    facts.sources[path] = text[:2000]
    reqs, extras = parse_requirements_text(text, path, tree.read)
    facts.test_requires += reqs
    facts.wanted_extras += extras


# -- CI and docs ------------------------------------------------------------------------------

def _read_ci(path: str, text: str, facts: Facts, tree: SourceTree) -> None:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        facts.notes.append(f"{path}: not YAML ({str(exc)[:80]})")
        return
    commands: list[str] = []
    _walk_ci(data, facts, commands, key="")
    for command in commands:
        for line in command.splitlines():
            _read_command_line(line.strip(), facts, tree)


def _walk_ci(node: Any, facts: Facts, commands: list[str], key: str) -> None:
    lowered = key.lower()
    if isinstance(node, dict):
        for k, v in node.items():
            _walk_ci(v, facts, commands, str(k))
    elif isinstance(node, list):
        for item in node:
            _walk_ci(item, facts, commands, key)
    elif isinstance(node, (str, int, float)):
        if "python" in lowered and "pypy" not in str(node).lower():
            facts.ci_pythons |= _versions(node)
        elif lowered in ("toxenv", "tox_env", "tox-env"):
            facts.ci_pythons |= _tox_env_versions(str(node))
        if isinstance(node, str):
            image = re.search(r"\bpython:(\d\.\d+)", node)
            if image:
                facts.ci_pythons.add(image.group(1))
            if lowered in _COMMAND_KEYS:
                commands.append(node)


def _read_command_line(line: str, facts: Facts, tree: SourceTree) -> None:
    line = line.lstrip("$ ").strip()
    pip = re.search(r"\bpip3?\s+install\s+(.*)$", line)
    if pip:
        tokens = re.split(r"\s+", pip.group(1).split("&&")[0].split(";")[0].strip())
        skip_next = False
        for i, token in enumerate(tokens):
            if skip_next:
                skip_next = False
                continue
            if token in ("-r", "--requirement", "-c", "--constraint") and i + 1 < len(tokens):
                if token in ("-r", "--requirement"):
                    _add_requirement_token("-r " + tokens[i + 1], facts, tree)
                skip_next = True
                continue
            if token == "-e":
                continue
            if token.startswith("-"):
                continue
            _add_requirement_token(token, facts, tree)
        return
    if _TEST_CMD.search(line) and not line.startswith("#"):
        facts.test_commands.append(line)


def _read_docs(path: str, text: str, facts: Facts) -> None:
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


# -- helpers ----------------------------------------------------------------------------------

def _add_requirement_token(token: str, facts: Facts, tree: SourceTree) -> None:
    token = unquote(token)
    include = re.match(r"^-r\s*(\S+)$", token)
    if include:
        path = include.group(1).replace("{toxinidir}/", "")
        body = tree.read(path)
        if body is not None:
            reqs, extras = parse_requirements_text(body, path, tree.read)
            facts.test_requires += reqs
            facts.wanted_extras += extras
        return
    local = re.match(r"^(?:-e\s*)?\.?/?\.?(\[[^\]]+\])$|^\.\[[^\]]+\]$", token)
    if local or token.startswith(".["):
        facts.wanted_extras += requirement_extras("x" + token[token.index("["):])
        return
    req = clean_requirement(token)
    if req and requirement_name(req) not in (None, "pip", "setuptools", "wheel"):
        facts.test_requires.append(req)


def _ini(text: str) -> configparser.ConfigParser:
    cfg = configparser.ConfigParser(interpolation=None, strict=False)
    cfg.read_string(text)
    return cfg


def _lines(value: str) -> list[str]:
    out = []
    for line in value.splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return _lines(value)
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def _versions(value: Any) -> set[str]:
    if isinstance(value, float):
        # YAML reads 3.10 as the float 3.1; no CI ever listed Python 3.1.
        text = f"{value}"
        return {"3.10"} if text == "3.1" else {text} if _VERSION.fullmatch(text) else set()
    return {f"{m.group(1)}.{m.group(2)}" for m in _VERSION.finditer(str(value))}


def _classifier_versions(classifiers: Any) -> set[str]:
    out = set()
    for item in classifiers or []:
        match = re.search(r"Programming Language :: Python :: (\d\.\d+)\s*$", str(item))
        if match:
            out.add(match.group(1))
    return out
