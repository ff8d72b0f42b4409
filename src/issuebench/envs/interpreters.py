"""Find a Python interpreter of a given version on this machine: uv's registry, pyenv, then PATH.

Environments are built from an interpreter that is already installed; issuebench never downloads
one by itself (the error message says how to). With `fallback="nearest"` a missing minor version is
replaced by the nearest installed one and the result records that it was.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from issuebench.errors import IssuebenchError, MissingSystemPiece

# Prints "<version> <base prefix> <base executable>" on every Python from 2.7 on.
_PROBE = (
    "import sys, os; "
    "base = getattr(sys, '_base_executable', None) or sys.executable; "
    "sys.stdout.write('%d.%d.%d\\n%s\\n%s\\n' % (sys.version_info[0], sys.version_info[1], "
    "sys.version_info[2], getattr(sys, 'base_prefix', sys.prefix), os.path.realpath(base)))"
)


@dataclass(frozen=True)
class PythonInfo:
    path: Path          # the interpreter executable (a real file, not a shim)
    version: str        # full version, e.g. "3.9.18"
    fell_back: bool = False
    requested: str = ""
    prefix: Path | None = None   # the installation prefix the sandbox must see read-only

    @property
    def minor(self) -> str:
        return ".".join(self.version.split(".")[:2])


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = re.findall(r"\d+", text)
    return tuple(int(p) for p in parts[:3])


def _matches(version: str, wanted: str) -> bool:
    want = _version_tuple(wanted)
    return _version_tuple(version)[: len(want)] == want


def _is_shim(path: Path) -> bool:
    # pyenv shims are scripts that fail unless the version is "activated"; never use them.
    return "shims" in path.parts


def _path_without_shims() -> str:
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and "shims" not in Path(p).parts)


@functools.lru_cache(maxsize=256)
def probe(path: str) -> PythonInfo | None:
    """Ask an interpreter for its version and real location; None if it does not run."""
    try:
        proc = subprocess.run([path, "-c", _PROBE], capture_output=True, text=True, timeout=30,
                              env={**os.environ, "PATH": _path_without_shims()})
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    lines = proc.stdout.strip().splitlines()
    if len(lines) != 3:
        return None
    version, prefix, executable = lines
    return PythonInfo(path=Path(executable), version=version, prefix=Path(os.path.realpath(prefix)))


def uv_binary() -> str | None:
    try:
        import uv

        return uv.find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def uv_command() -> str:
    exe = uv_binary()
    if not exe:
        raise MissingSystemPiece("uv is not installed", hint="pip install uv (it is a dependency of issuebench)")
    return exe


def _from_uv(version: str) -> PythonInfo | None:
    uv = uv_binary()
    if not uv:
        return None
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PYTHON")}
    env["PATH"] = _path_without_shims()
    try:
        proc = subprocess.run([uv, "python", "find", "--no-project", "--no-python-downloads", version],
                              capture_output=True, text=True, timeout=60, env=env, cwd="/")
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0 or not proc.stdout.strip():
        return None
    return probe(proc.stdout.strip().splitlines()[-1])


def _pyenv_root() -> Path | None:
    root = os.environ.get("PYENV_ROOT")
    if root:
        return Path(root)
    exe = shutil.which("pyenv")
    if exe:
        try:
            out = subprocess.run([exe, "root"], capture_output=True, text=True, timeout=30)
            if out.returncode == 0 and out.stdout.strip():
                return Path(out.stdout.strip())
        except (OSError, subprocess.TimeoutExpired):
            pass
    default = Path.home() / ".pyenv"
    return default if default.is_dir() else None


def _pyenv_candidates() -> list[Path]:
    root = _pyenv_root()
    if root is None or not (root / "versions").is_dir():
        return []
    found = []
    for vdir in sorted((root / "versions").iterdir()):
        for name in ("python3", "python", "python2"):
            exe = vdir / "bin" / name
            if exe.exists():
                found.append(exe)
                break
    return found


def _path_candidates() -> list[Path]:
    found: list[Path] = []
    for directory in _path_without_shims().split(os.pathsep):
        d = Path(directory)
        if not d.is_dir():
            continue
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for name in names:
            if re.fullmatch(r"python(\d(\.\d+)?)?", name):
                found.append(d / name)
    return found


def _uv_installed() -> list[Path]:
    uv = uv_binary()
    if not uv:
        return []
    try:
        proc = subprocess.run([uv, "python", "list", "--only-installed", "--no-python-downloads"],
                              capture_output=True, text=True, timeout=60, cwd="/",
                              env={**os.environ, "PATH": _path_without_shims()})
    except (OSError, subprocess.TimeoutExpired):
        return []
    paths = []
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1].startswith("/"):
            paths.append(Path(parts[1]))
    return paths


def installed_pythons() -> list[PythonInfo]:
    """Every distinct interpreter found (uv, pyenv, PATH), newest first."""
    seen: dict[str, PythonInfo] = {}
    for candidate in [*_uv_installed(), *_pyenv_candidates(), *_path_candidates()]:
        if _is_shim(candidate):
            continue
        info = probe(str(candidate))
        if info is not None and str(info.path) not in seen:
            seen[str(info.path)] = info
    return sorted(seen.values(), key=lambda i: _version_tuple(i.version), reverse=True)


def _exact(version: str) -> PythonInfo | None:
    info = _from_uv(version)
    if info is not None and _matches(info.version, version):
        return info
    for candidate in _pyenv_candidates():
        name = candidate.parent.parent.name
        if _matches(name, version):
            info = probe(str(candidate))
            if info is not None and _matches(info.version, version):
                return info
    minor = ".".join(str(p) for p in _version_tuple(version)[:2])
    exe = shutil.which(f"python{minor}", path=_path_without_shims())
    if exe:
        info = probe(exe)
        if info is not None and _matches(info.version, version):
            return info
    return None


@functools.lru_cache(maxsize=64)
def find_python(version: str, fallback: str = "error") -> PythonInfo:
    """The interpreter for `version` ("3.9" or "3.9.18"); see the module docstring."""
    if fallback not in ("error", "nearest"):
        raise IssuebenchError(f"--python-fallback must be 'error' or 'nearest', not {fallback!r}")
    want = _version_tuple(version)
    if len(want) < 2:
        raise IssuebenchError(f"python version {version!r} is not of the form X.Y or X.Y.Z",
                              hint="fix the `python` field of the recipe or the row's env")
    info = _exact(version)
    if info is not None:
        return PythonInfo(info.path, info.version, False, version, info.prefix)
    if fallback == "nearest":
        same_major = [i for i in installed_pythons() if _version_tuple(i.version)[0] == want[0]]
        if same_major:
            # Nearest minor; on a tie prefer the newer one (older ones lack more wheels).
            best = min(same_major, key=lambda i: (abs(_version_tuple(i.version)[1] - want[1]),
                                                  -_version_tuple(i.version)[1]))
            return PythonInfo(best.path, best.version, True, version, best.prefix)
    minor = ".".join(str(p) for p in want[:2])
    raise MissingSystemPiece(
        f"Python {minor} is not installed (looked in uv's pythons, pyenv and PATH)",
        hint=f"install it with `uv python install {minor}` or `pyenv install {minor}`, "
             "or pass --python-fallback nearest to use the nearest installed version",
    )
