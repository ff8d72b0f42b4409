"""Benchmark `issuebench setup` on released sdists of well-known projects, with no model.

For each project: pick its newest release at least --years old, fetch the sdist with
`pip download --no-deps --no-binary :all:`, unpack it, and run setup with the release's date as the
cutoff. Prints one line per project and the overall success rate and median wall time.

Release dates come from the JSON API of the index pip is configured with (never a hard-coded
host); when that is unavailable, versions come from `pip index versions` and the date from the
sdist's newest member mtime.

    python benchmarks/setup_corpus.py [--projects attrs,idna] [--years 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path

DEFAULT_PROJECTS = ["attrs", "more-itertools", "toolz", "idna", "packaging", "itsdangerous", "markupsafe",
                    "click", "jinja2", "werkzeug", "pyparsing", "python-dateutil", "sortedcontainers",
                    "cachetools", "tabulate"]


def pip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, check=False)


def index_json_base() -> str | None:
    """The JSON API root of pip's configured index (its simple URL without /simple)."""
    done = pip("config", "get", "global.index-url")
    url = done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None
    if url is None:
        try:
            from pip._internal.models.index import PyPI
            url = PyPI.simple_url
        except ImportError:
            return None
    return url.rstrip("/").removesuffix("/simple")


def pick_release(name: str, cutoff: dt.datetime, base: str | None) -> tuple[str, str | None]:
    """(version, upload date) of the newest final release with an sdist uploaded before cutoff."""
    if base:
        try:
            with urllib.request.urlopen(f"{base}/pypi/{name}/json", timeout=60) as response:
                data = json.loads(response.read())
            best: tuple[dt.datetime, str] | None = None
            for version, files in data.get("releases", {}).items():
                if any(c.isalpha() for c in version):
                    continue          # pre-releases, dev releases
                for item in files:
                    if item.get("packagetype") != "sdist" or item.get("yanked"):
                        continue
                    when = dt.datetime.fromisoformat(item["upload_time_iso_8601"].replace("Z", "+00:00"))
                    if when <= cutoff and (best is None or when > best[0]):
                        best = (when, version)
            if best:
                return best[1], best[0].strftime("%Y-%m-%dT%H:%M:%SZ")
        except (OSError, ValueError, KeyError):
            pass
    versions = pip("index", "versions", name).stdout
    listed = versions.split("Available versions:", 1)[-1].split("\n", 1)[0]
    candidates = [v.strip() for v in listed.split(",") if v.strip() and not any(c.isalpha() for c in v)]
    # Without dates, take a release a few steps back; its date is read from the sdist later.
    return (candidates[min(len(candidates) - 1, 8)] if candidates else ""), None


def fetch_sdist(name: str, version: str, dest: Path) -> tuple[Path, str]:
    """Unpacked source folder and the newest member mtime of the sdist."""
    done = pip("download", "--no-deps", "--no-binary", ":all:", "-d", str(dest),
               f"{name}=={version}")
    archives = [p for p in dest.iterdir() if p.suffix in (".gz", ".zip", ".bz2")]
    if not archives:
        raise RuntimeError(f"pip download failed: {done.stderr.strip()[-300:]}")
    archive = archives[0]
    out = dest / "src"
    newest = 0.0
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(out)
            newest = max(dt.datetime(*i.date_time).timestamp() for i in zf.infolist())
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(out, filter="data")
            newest = max(m.mtime for m in tar.getmembers())
    roots = [p for p in out.iterdir() if p.is_dir()]
    date = dt.datetime.fromtimestamp(newest, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return (roots[0] if len(roots) == 1 else out), date


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--projects", default=",".join(DEFAULT_PROJECTS))
    parser.add_argument("--years", type=float, default=2.0, help="release at least this old")
    parser.add_argument("--max-iterations", type=int, default=4)
    parser.add_argument("--json", type=Path, help="write per-project results here")
    args = parser.parse_args()

    from issuebench.setup import setup_repository

    cutoff = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=365.25 * args.years)
    base = index_json_base()
    rows = []
    for name in [p.strip() for p in args.projects.split(",") if p.strip()]:
        row: dict = {"project": name}
        work = Path(tempfile.mkdtemp(prefix=f"setup-bench-{name}-"))
        try:
            version, date = pick_release(name, cutoff, base)
            row["version"] = version
            folder, mtime_date = fetch_sdist(name, version, work)
            row["date"] = date or mtime_date
            started = time.monotonic()
            result = setup_repository(folder, date=row["date"], max_iterations=args.max_iterations,
                                      memory=False, repo_name=name)
            row.update(success=result.success, iterations=result.iterations,
                       seconds=round(time.monotonic() - started, 1), python=result.python,
                       tests=f"{result.tests_passed}/{result.tests_run}", reason=result.reason,
                       fixes=[a.fix for a in result.attempts if a.fix])
        except Exception as exc:   # one project's failure is a row, never the end of the run
            row.update(success=False, iterations=0, seconds=None, reason=f"{type(exc).__name__}: {exc}"[:300])
        finally:
            shutil.rmtree(work, ignore_errors=True)
        rows.append(row)
        print(f"{name:18} {row.get('version', '?'):10} {str(row.get('date', ''))[:10]:10} "
              f"{'OK ' if row['success'] else 'FAIL'} it={row['iterations']} t={row['seconds']}s "
              f"py={row.get('python')} tests={row.get('tests', '-')} {row.get('reason', '')} "
              f"{'; '.join(row.get('fixes', []))}", flush=True)
    times = [r["seconds"] for r in rows if r.get("seconds") is not None]
    ok = sum(1 for r in rows if r["success"])
    print(f"\nsuccess {ok}/{len(rows)} = {ok / max(1, len(rows)):.0%}; "
          f"median {statistics.median(times) if times else 0:.1f}s per project; no model")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
