"""When a package release was published, read from the package index (PEP 691 JSON, PEP 700 times).

The environment builder needs it when an exact pin postdates a task: that pin's dependencies have to
be taken as of the pin's own publication, not the task's date. Answers are cached on disk, since a
release's upload time never changes.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from pathlib import Path

from packaging.utils import canonicalize_name

from issuebench import config
from issuebench.index.fetch import index_url

_ACCEPT = "application/vnd.pypi.simple.v1+json"
_lock = threading.Lock()


def _cache_file() -> Path:
    return config.home() / "release-dates.json"


def _read_cache() -> dict[str, str]:
    try:
        return json.loads(_cache_file().read_text())
    except (OSError, ValueError):
        return {}


def _write_cache(data: dict[str, str]) -> None:
    path = _cache_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(data, sort_keys=True))
    tmp.replace(path)


def version_of(filename: str, name: str) -> str | None:
    """The version part of a distribution file name (sdist or wheel) of project `name`."""
    stem = filename
    for suffix in (".tar.gz", ".tar.bz2", ".zip", ".whl", ".tgz", ".egg"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    else:
        return None
    canon = canonicalize_name(name)
    parts = stem.split("-")
    for i in range(1, len(parts)):
        if canonicalize_name("-".join(parts[:i])) == canon:
            return parts[i]
    return None


def index_files(name: str, *, timeout: float = 30) -> list[dict]:
    """The `files` of a project's page on the index pip uses (PEP 691 JSON)."""

    url = index_url().rstrip("/") + f"/{canonicalize_name(name)}/"
    request = urllib.request.Request(url, headers={"Accept": _ACCEPT})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return list(json.loads(response.read().decode("utf-8")).get("files", []))


def fetch_upload_times(name: str, *, timeout: float = 30) -> dict[str, str]:
    """Earliest upload time (ISO 8601) of each version of `name` on the configured index."""
    times: dict[str, str] = {}
    for entry in index_files(name, timeout=timeout):
        version, when = version_of(entry.get("filename", ""), name), entry.get("upload-time")
        if version and when and (version not in times or when < times[version]):
            times[version] = when
    return times


def upload_time(name: str, version: str) -> str | None:
    """When `name==version` was first published, or None when the index cannot say."""
    key = f"{canonicalize_name(name)}=={version}"
    with _lock:
        cached = _read_cache()
    if key in cached:
        return cached[key] or None
    try:
        times = fetch_upload_times(name)
    except (OSError, ValueError):
        return None  # offline or no JSON API: not cached, so a later online run can still learn it
    with _lock:
        cached = _read_cache()
        for v, when in times.items():
            cached[f"{canonicalize_name(name)}=={v}"] = when
        cached.setdefault(key, "")
        _write_cache(cached)
    return cached[key] or None


def upload_times(name: str) -> dict[str, str]:
    """Every version's first upload time (cached with upload_time's answers); {} when unknown."""
    canon = canonicalize_name(name)
    with _lock:
        cached = _read_cache()
    marker = f"{canon}==*"
    if marker not in cached:
        try:
            times = fetch_upload_times(name)
        except (OSError, ValueError):
            return {}
        with _lock:
            cached = _read_cache()
            cached.update({f"{canon}=={v}": t for v, t in times.items()})
            cached[marker] = "listed"
            _write_cache(cached)
    prefix = f"{canon}=="
    return {k[len(prefix):]: v for k, v in cached.items() if k.startswith(prefix) and k != marker and v}


def _wheel_fits(filename: str, python_tag: str) -> bool:
    """Whether a wheel file installs on CPython `python_tag` (e.g. cp310) on Linux x86_64/aarch64."""
    parts = filename[: -len(".whl")].split("-")
    if len(parts) < 5:
        return False
    pythons, abi, platform = parts[-3], parts[-2], parts[-1]
    def minor(tag: str) -> int:
        return int(tag[3:]) if tag[:3] == "cp3" and tag[3:].isdigit() else 999

    tag_ok = any(p in (python_tag, "py3") or (abi == "abi3" and minor(p) <= minor(python_tag))
                 for p in pythons.split("."))
    platform_ok = platform == "any" or "linux" in platform
    return tag_ok and platform_ok


def first_wheel_after(name: str, python_tag: str, after: str, *, timeout: float = 30) -> str | None:
    """Upload time of the first release after `after` that has a wheel for `python_tag` (cp310)."""
    try:
        files = index_files(name, timeout=timeout)
    except (OSError, ValueError):
        return None
    times = [entry["upload-time"] for entry in files
             if entry.get("filename", "").endswith(".whl") and entry.get("upload-time", "") > after
             and not entry.get("yanked") and _wheel_fits(entry["filename"], python_tag)]
    return min(times) if times else None
