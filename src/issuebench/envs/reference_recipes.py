"""Turn the reference harness's per-repository spec tables into issuebench recipe files.

The tables live in the `swebench` package (swebench/harness/constants/python.py in 4.x,
swebench/harness/constants.py before). We read that one file's text and evaluate it on its own
(it defines plain dicts and imports nothing), so neither swebench nor its heavy dependencies are
ever imported or needed at run time. The source is a downloaded wheel/sdist, an unpacked tree, or an
installed copy; by default `pip download --no-deps swebench==<version>` into a temporary folder.

What conda and Docker did in the reference, and uv cannot, is listed per repository and written
into the recipes' notes: system packages (apt-get), locale generation, CPU limits, non-root users.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from issuebench.config import TESTBED_PATH
from issuebench.envs.conda import conda_to_pip
from issuebench.envs.recipes import packaged_recipes_dir, recipe_filename
from issuebench.errors import IssuebenchError
from issuebench.tomlcompat import tomllib

DEFAULT_VERSION = "4.1.0"
_SPEC_FILES = ("swebench/harness/constants/python.py", "swebench/harness/constants.py")
_PARSER_FILES = ("swebench/harness/log_parsers/python.py", "swebench/harness/log_parsers.py")
_EDITABLE = "python -m pip install -e ."
# Repositories with compiled extensions built in place: a patch may touch them, and the reference
# re-runs its install before every test run; we rebuild the extensions in the workspace instead.
_INPLACE_EXT = {"scikit-learn/scikit-learn", "astropy/astropy", "matplotlib/matplotlib"}
# The reference's sphinx command runs pytest through tox (tox.ini: `pytest -rA --durations 25`).
_SPHINX_TEST = "pytest -rA --durations 25"


@dataclass
class RepoResult:
    repo: str
    path: Path
    versions: list[str]
    untranslated: list[str] = field(default_factory=list)


# -- reading the reference tables ---------------------------------------------------------------

def download_swebench(version: str, dest: Path) -> Path:
    """`pip download --no-deps swebench==version`: the wheel (or sdist) path."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", f"swebench=={version}", "-d", str(dest)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    files = sorted(dest.glob("swebench-*"))
    if proc.returncode != 0 or not files:
        raise IssuebenchError(f"could not download swebench=={version}: {proc.stderr.strip()[-300:]}",
                              hint="check the network, or pass --from with a swebench wheel, sdist or source folder")
    return files[0]


def _read_member(source: Path, candidates: tuple[str, ...]) -> str | None:
    if source.is_dir():
        for rel in candidates:
            for base in (source, source.parent):
                path = base / rel
                if path.is_file():
                    return path.read_text(encoding="utf-8")
        for rel in candidates:   # a source tree: <dir>/swebench/... anywhere one level down
            for path in source.glob(f"*/{rel}"):
                return path.read_text(encoding="utf-8")
        return None
    if source.suffix == ".whl" or zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as zf:
            names = set(zf.namelist())
            for rel in candidates:
                if rel in names:
                    return zf.read(rel).decode("utf-8")
        return None
    if source.name.endswith((".tar.gz", ".tgz")):
        with tarfile.open(source) as tf:
            for member in tf.getmembers():
                for rel in candidates:
                    if member.name.endswith("/" + rel):
                        handle = tf.extractfile(member)
                        if handle is not None:
                            return handle.read().decode("utf-8")
        return None
    raise IssuebenchError(f"{source}: not a wheel, an sdist or a folder",
                          hint="pass --from a swebench .whl/.tar.gz or an unpacked source folder")


def installed_swebench() -> Path | None:
    spec = importlib.util.find_spec("swebench")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).parent


def read_reference_tables(source: Path) -> dict[str, Any]:
    """MAP_REPO_VERSION_TO_SPECS(_PY), MAP_REPO_TO_REQS_PATHS, MAP_REPO_TO_ENV_YML_PATHS, parsers."""
    text = _read_member(source, _SPEC_FILES)
    if text is None:
        raise IssuebenchError(f"{source}: no {' or '.join(_SPEC_FILES)} inside",
                              hint="pass a swebench release (4.x or earlier) to --from")
    namespace: dict[str, Any] = {}
    # The file is plain data built with dict literals and loops; nothing of swebench is imported.
    exec(compile(text, _SPEC_FILES[0], "exec"), namespace)
    specs = namespace.get("MAP_REPO_VERSION_TO_SPECS_PY") or namespace.get("MAP_REPO_VERSION_TO_SPECS")
    if not isinstance(specs, dict):
        raise IssuebenchError(f"{source}: the spec table MAP_REPO_VERSION_TO_SPECS was not found")
    parsers: dict[str, str] = {}
    parser_text = _read_member(source, _PARSER_FILES)
    if parser_text:
        table = re.search(r"MAP_REPO_TO_PARSER(?:_PY)?\s*=\s*\{(.*?)\}", parser_text, re.S)
        if table:
            parsers = dict(re.findall(r'"([^"]+)"\s*:\s*(\w+)', table.group(1)))
    return {
        "specs": specs,
        "reqs_paths": namespace.get("MAP_REPO_TO_REQS_PATHS", {}),
        "env_yml_paths": namespace.get("MAP_REPO_TO_ENV_YML_PATHS", {}),
        "parsers": parsers,
    }


# -- translation --------------------------------------------------------------------------------

@dataclass
class Corrections:
    items: list[dict[str, Any]]

    @classmethod
    def load(cls) -> Corrections:
        path = packaged_recipes_dir() / "_import_corrections.toml"
        data = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        return cls(list(data.get("correction", [])))

    def for_version(self, repo: str, version: str) -> list[dict[str, Any]]:
        return [c for c in self.items if c.get("repo") == repo
                and ("*" in c.get("versions", ["*"]) or version in c.get("versions", []))]


def _split_packages(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _translate_install(repo: str, command: str, notes: list[str]) -> list[str]:
    parts = [c.strip() for c in re.split(r";|&&", command) if c.strip()]
    if any(p.startswith("python setup.py install") for p in parts) or re.fullmatch(
            r"python -m pip install \.(\s.*)?", command.strip()):
        notes.append(f"install `{command}` replaced by `{_EDITABLE}` (one env serves every instance of a "
                     f"version, so the project is installed editable at {TESTBED_PATH})")
        return [_EDITABLE]
    return [command]


_APT = re.compile(r"\bapt(-get)?\b")


@dataclass
class _Draft:
    """A recipe being translated: what each phase found, and what it could not translate."""

    out: dict[str, Any]
    untranslated: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)
    requirements: list[str] = field(default_factory=list)
    pre_install: list[str] = field(default_factory=list)
    install: list[str] = field(default_factory=list)
    env_vars: dict[str, str] = field(default_factory=dict)
    needs_network: bool = False


def translate_spec(repo: str, version: str, ref: dict[str, Any], tables: dict[str, Any],
                   corrections: Corrections) -> tuple[dict[str, Any], list[str]]:
    """One reference spec -> (recipe table, what could not be translated).

    In phases: packages (conda names to PyPI, requirement and environment files) -> pre-install
    commands -> install -> environment variables from the eval commands -> the test command,
    parser and in-place rebuild -> the packaged corrections -> the recipe table."""
    draft = _Draft({"python": str(ref.get("python", "3.9"))})
    _translate_packages(repo, ref, tables, draft)
    _translate_pre_install(repo, ref, draft)
    draft.install = _translate_install(repo, ref["install"], draft.notes) if ref.get("install") else []
    _translate_eval_env(ref, draft)
    _translate_tests(repo, ref, tables, draft)
    _apply_corrections(corrections.for_version(repo, version), draft)
    return _recipe_table(draft), draft.untranslated


def _translate_packages(repo: str, ref: dict[str, Any], tables: dict[str, Any], draft: _Draft) -> None:
    raw = ref.get("packages")
    if raw == "requirements.txt":
        paths = tables["reqs_paths"].get(repo, [])
        if paths:
            draft.requirements.append("|".join(paths))
        else:
            draft.untranslated.append("packages=requirements.txt but the reference names no file")
    elif raw == "environment.yml":
        paths = tables["env_yml_paths"].get(repo, ["environment.yml"])
        draft.requirements.append("|".join(paths))
        draft.notes.append("conda environment file installed with uv: conda-only entries are skipped (see build.log)")
    elif isinstance(raw, str) and raw.strip():
        for item in _split_packages(raw):
            pip_name = conda_to_pip(item)
            if pip_name is None:
                draft.untranslated.append(f"conda package `{item}` has no PyPI counterpart")
            else:
                draft.packages.append(pip_name)
    draft.packages += [str(p) for p in ref.get("pip_packages", [])]


def _translate_pre_install(repo: str, ref: dict[str, Any], draft: _Draft) -> None:
    for command in ref.get("pre_install", []):
        if _APT.search(command):
            draft.untranslated.append(f"system packages not installed: `{command}`")
        elif "locale-gen" in command or "/etc/locale.gen" in command:
            draft.untranslated.append(f"locale setup skipped: `{command}` (C.UTF-8 used instead)")
        elif "tox.ini" in command and repo == "sphinx-doc/sphinx":
            draft.notes.append("tests run with pytest directly, not through tox, so tox.ini is left as it is")
        else:
            draft.pre_install.append(command.replace("/testbed", TESTBED_PATH))
    if any(re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", c) for c in draft.pre_install):
        # Shell variables set in one line and used in the next: one script, as in the reference.
        draft.pre_install = ["set -e\n" + "\n".join(draft.pre_install)]


def _translate_eval_env(ref: dict[str, Any], draft: _Draft) -> None:
    """The eval commands' exports as variables; what conda and Docker did beyond them is noted."""
    for command in ref.get("eval_commands", []):
        match = re.match(r"^export\s+([A-Za-z_]\w*)=(.*)$", command.strip())
        if match:
            value = match.group(2).strip().strip("'\"")
            if match.group(1) in ("LANG", "LC_ALL") and value == "en_US.UTF-8":
                value = "C.UTF-8"
            if match.group(1) == "LANGUAGE":
                continue
            draft.env_vars[match.group(1)] = value
        elif "locale" in command:
            draft.untranslated.append(f"locale setup skipped: `{command}` (C.UTF-8 used instead)")
        else:
            draft.untranslated.append(f"eval command not translated: `{command}`")
    for key, what in (("nano_cpus", "CPU limit"), ("execute_test_as_nonroot", "tests as a non-root user"),
                      ("no_use_env", "conda base env instead of a named env")):
        if key in ref:
            draft.untranslated.append(f"{what} ({key}={ref[key]!r}) not applied")


def _translate_tests(repo: str, ref: dict[str, Any], tables: dict[str, Any], draft: _Draft) -> None:
    test_cmd = str(ref.get("test_cmd", "pytest -rA"))
    if test_cmd.startswith("tox "):
        draft.notes.append(f"reference test command `{test_cmd}` replaced by `{_SPHINX_TEST}` (what tox.ini runs)")
        test_cmd = _SPHINX_TEST
    draft.out["test_cmd"] = test_cmd
    draft.out["test_directives"] = "django" if repo == "django/django" else "paths"
    draft.out["log_parser"] = tables["parsers"].get(repo) or "parse_log_pytest"
    if repo in _INPLACE_EXT and draft.install:
        draft.out["pre_test"] = ["python setup.py build_ext --inplace -q >/dev/null 2>&1 || "
                                 "python setup.py build_ext --inplace"]
        draft.notes.append("compiled extensions are rebuilt in each workspace before the tests (the reference "
                           "re-runs its install there)")


def _apply_corrections(fixes: list[dict[str, Any]], draft: _Draft) -> None:
    overrides: dict[str, Any] = {}
    for fix in fixes:
        for old, new in fix.get("replace_packages", {}).items():
            draft.packages = [new if p == old else p for p in draft.packages]
        draft.packages += [p for p in fix.get("add_packages", []) if p not in draft.packages]
        if fix.get("needs_network"):
            draft.needs_network = True
        overrides.update(fix.get("set", {}))  # any recipe field, e.g. test_cmd or log_parser
        draft.notes.append("correction: " + fix["note"])
    draft.out.update(overrides)


def _recipe_table(draft: _Draft) -> dict[str, Any]:
    out = draft.out
    for key, value in (("packages", draft.packages), ("requirements_files", draft.requirements),
                       ("pre_install", draft.pre_install), ("install", draft.install),
                       ("env_vars", draft.env_vars)):
        if value:
            out[key] = value
    out["exclude_newer_source"] = "environment_setup_commit"
    if draft.needs_network:
        out["needs_network"] = True
    if draft.untranslated or draft.notes:
        out["notes"] = draft.notes + [f"not translated: {u}" for u in draft.untranslated]
    return out


# -- writing TOML -------------------------------------------------------------------------------

def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        if "\n" in value:
            body = value.replace("\\", "\\\\").replace('"""', '\\"""')
            return '"""\n' + body + ('\\\n' if not body.endswith("\n") else "") + '"""'
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + "".join(f"  {_toml_value(v)},\n" for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_value(key)


def render_recipe(repo: str, versions: dict[str, dict[str, Any]], source: str) -> str:
    """A recipe file: fields equal across all versions go to [defaults]."""
    tables = list(versions.values())
    common = {k: v for k, v in tables[0].items() if k != "notes" and all(t.get(k) == v for t in tables)}
    lines = [f"# Generated by `issuebench envs import-swebench` from {source}.",
             "# Edit freely; a recipe passed with --recipes overrides this one.",
             f"repo = {_toml_value(repo)}", "", "[defaults]"]
    lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in common.items()]
    for version, table in versions.items():
        lines += ["", f"[versions.{_toml_value(version)}]"]
        lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in table.items() if k not in common]
    return "\n".join(lines) + "\n"


def _version_sort_key(version: str) -> tuple:
    return tuple(int(p) if p.isdigit() else 0 for p in re.findall(r"\d+", version))


def import_swebench(output: Path | None = None, source: Path | None = None,
                    version: str = DEFAULT_VERSION, repos: list[str] | None = None) -> list[RepoResult]:
    """Write one recipe per Python repository of the reference tables; returns what was written."""
    output = Path(output) if output is not None else packaged_recipes_dir()
    output.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="issuebench-swebench-") as tmp:
        src = source or installed_swebench() or download_swebench(version, Path(tmp))
        tables = read_reference_tables(Path(src))
        found = re.match(r"swebench-(\d[^-]*?)(?:-py|\.tar|$)", Path(src).name)
        label = f"swebench {found.group(1) if found else version}" if source is None or found else Path(src).name
        corrections = Corrections.load()
        results = []
        for repo, by_version in sorted(tables["specs"].items()):
            if repo == "swe-bench/humaneval" or (repos and repo not in repos):
                continue
            recipe_versions: dict[str, dict[str, Any]] = {}
            untranslated: list[str] = []
            for ver in sorted(by_version, key=_version_sort_key):
                table, missing = translate_spec(repo, ver, by_version[ver], tables, corrections)
                recipe_versions[ver] = table
                untranslated += [m for m in missing if m not in untranslated]
            path = output / recipe_filename(repo)
            path.write_text(render_recipe(repo, recipe_versions, label), encoding="utf-8")
            tomllib.loads(path.read_text(encoding="utf-8"))   # what we wrote must load
            results.append(RepoResult(repo, path, list(recipe_versions), untranslated))
    return results
