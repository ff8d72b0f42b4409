"""collect's diff of a pull request gives back its files byte for byte, whatever their encoding:
a test fixture in a legacy encoding (chardet's Johab and Shift JIS samples) read as text became
U+FFFD, so the task's test files were not the pull request's and its tests failed either way."""

from __future__ import annotations

import subprocess
from pathlib import Path

from issuebench.collect.candidates import split_diff
from issuebench.collect.candidates import test_predicate as make_test_predicate
from issuebench.collect.history import batch_diffs, commit_diff
from tests.gitrepo import git, init_repo

JOHAB = "한국어 문서".encode("johab") + b"\n"
SHIFT_JIS = "日本語のテキスト".encode("shift_jis") + b"\n"


def _write(repo: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(data)


def _pull_request(repo: Path) -> tuple[str, str]:
    base = init_repo(repo, {"pkg/detect.py": "KNOWN = []\n", "tests/README.txt": "fixtures\n",
                            "tests/SHIFT_JIS/old sample.txt": "plain\n"})
    _write(repo, {"pkg/detect.py": b"KNOWN = ['johab']\n", "tests/README.txt": b"fixtures, ok\n",
                  "tests/Johab/readme.txt": JOHAB, "tests/SHIFT_JIS/old sample.txt": SHIFT_JIS})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add a Johab prober")
    return base, git(repo, "rev-parse", "HEAD")


def _applies_back(tmp_path: Path, repo: Path, base: str, diff: str) -> None:
    assert "\ufffd" not in diff
    code, tests = split_diff(diff, make_test_predicate())
    assert "+KNOWN = ['johab']" in code                   # UTF-8 text stays a readable hunk
    assert "+fixtures, ok" in tests
    assert tests.count("GIT binary patch") == 2           # the two legacy-encoded fixtures
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", str(repo), str(checkout)], check=True)
    git(checkout, "checkout", "-q", base)
    (checkout / "test.patch").write_text(tests)
    git(checkout, "apply", "test.patch")
    assert (checkout / "tests/Johab/readme.txt").read_bytes() == JOHAB
    assert (checkout / "tests/SHIFT_JIS/old sample.txt").read_bytes() == SHIFT_JIS


def test_the_mined_diffs_of_a_pull_request_apply_back_byte_for_byte(tmp_path: Path) -> None:
    # collect mines candidates with one `git diff-tree --stdin` for many pairs.
    repo = tmp_path / "repo"
    base, head = _pull_request(repo)
    diffs = batch_diffs(repo, [(base, head), (base, base)])
    assert diffs[1] == ""                                  # the pairs stay cut apart
    _applies_back(tmp_path, repo, base, diffs[0])


def test_a_fixture_in_a_legacy_encoding_applies_back_byte_for_byte(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    base, head = _pull_request(repo)
    _applies_back(tmp_path, repo, base, commit_diff(repo, base, head))


def test_a_utf8_diff_is_as_before(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    base = init_repo(repo, {"pkg/m.py": "a = 'é'\n"})
    _write(repo, {"pkg/m.py": "a = 'è'\n".encode()})
    git(repo, "commit", "-q", "-am", "change")
    diff = commit_diff(repo, base, "HEAD")
    assert "GIT binary patch" not in diff and "+a = 'è'" in diff
