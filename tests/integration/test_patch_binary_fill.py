"""A diff that names binary files without their data (as SWE-bench's test patches do for images)
applies when the repository holds the blobs, and fails naming the file when it does not."""

from __future__ import annotations

import os
import re
from pathlib import Path

from issuebench.harness import EvalOptions, build_context, run_tests
from issuebench.models import EnvSpec, PatchStatus, Task
from issuebench.patch import apply_patch
from tests.gitrepo import commit_files, git, init_repo

PNG = bytes(range(256)) * 4 + b"\x00\x89PNG"
NOTES = "".join(f"{i}\n" for i in range(1, 13))


def _repo_with_images(tmp_path: Path) -> tuple[Path, str, str]:
    """A source repository whose fix commit (on a branch) adds an image, changes another and a
    text file, and a workspace beside it holding the base commit alone, as the harness makes one.
    Returns (workspace, base, fix); the source is tmp_path / "src"."""
    repo = tmp_path / "src"
    init_repo(repo, {"notes.txt": NOTES})
    (repo / "old.png").write_bytes(b"\x00old image\xff")
    git(repo, "add", "old.png")
    git(repo, "commit", "-q", "-m", "an image")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "fix")
    (repo / "fixtures").mkdir()
    (repo / "fixtures" / "new.png").write_bytes(PNG)
    (repo / "old.png").write_bytes(b"\x00new image\xfe")
    head = commit_files(repo, {"notes.txt": NOTES.replace("6\n", "six\n")}, "images and notes")
    git(repo, "checkout", "-q", base)
    ws = tmp_path / "ws"
    init_repo(ws, {"notes.txt": NOTES})
    (ws / "old.png").write_bytes(b"\x00old image\xff")
    git(ws, "add", "old.png")
    git(ws, "commit", "-q", "-m", "the base alone")
    return ws, base, head


def _diff(tmp_path: Path, base: str, head: str, *paths: str) -> str:
    return git(tmp_path / "src", "diff", base, head, "--", *paths) + "\n"  # no --binary: "Binary files ... differ"


def test_dataless_binary_sections_are_written_from_the_repositorys_objects(tmp_path):
    repo, base, head = _repo_with_images(tmp_path)
    diff = _diff(tmp_path, base, head)
    assert diff.count("Binary files") == 2 and "GIT binary patch" not in diff
    result = apply_patch(repo, diff, binaries_from=tmp_path / "src")
    assert result.applied, result.log
    assert (repo / "fixtures" / "new.png").read_bytes() == PNG
    assert (repo / "old.png").read_bytes() == b"\x00new image\xfe"
    assert (repo / "notes.txt").read_text() == NOTES.replace("6\n", "six\n")
    assert "fixtures/new.png: blob" in result.log


def test_a_patch_of_binary_files_alone_applies(tmp_path):
    repo, base, head = _repo_with_images(tmp_path)
    result = apply_patch(repo, _diff(tmp_path, base, head, "fixtures/new.png"), binaries_from=tmp_path / "src")
    assert result.applied and result.method == "binary from objects"
    assert (repo / "fixtures" / "new.png").read_bytes() == PNG


def test_a_blob_the_repository_lacks_fails_naming_the_file(tmp_path):
    repo, base, head = _repo_with_images(tmp_path)
    diff = re.sub(r"^index 0+\.\.[0-9a-f]+", "index 0000000..abcdef1", _diff(tmp_path, base, head),
                  flags=re.M)  # the new image's blob: one the repository does not hold
    result = apply_patch(repo, diff, binaries_from=tmp_path / "src")
    assert result.status is PatchStatus.DOES_NOT_APPLY
    assert "fixtures/new.png" in result.reason
    assert not (repo / "fixtures" / "new.png").exists()
    assert (repo / "notes.txt").read_text() == NOTES  # nothing half-applied


def test_the_text_failing_writes_no_binary(tmp_path):
    repo, base, head = _repo_with_images(tmp_path)
    (repo / "notes.txt").write_text("".join(f"line {c}\n" for c in "abcdefghijkl"))  # no context matches
    result = apply_patch(repo, _diff(tmp_path, base, head), binaries_from=tmp_path / "src")
    assert not result.applied
    assert not (repo / "fixtures" / "new.png").exists()
    assert (repo / "old.png").read_bytes() == b"\x00old image\xff"


def test_a_binary_is_never_written_through_a_symbolic_link(tmp_path):
    repo, base, head = _repo_with_images(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, repo / "fixtures")  # the tree's fixtures/ now leads out of it
    result = apply_patch(repo, _diff(tmp_path, base, head, "fixtures/new.png"), binaries_from=tmp_path / "src")
    assert not result.applied
    assert list(outside.iterdir()) == []


def test_without_a_trusted_source_nothing_is_filled(tmp_path):
    """A prediction's patch is applied without `binaries_from`: it may not draw the fix's blobs out
    of the clone, and the workspace itself holds no commit after the base."""
    repo, base, head = _repo_with_images(tmp_path)
    result = apply_patch(repo, _diff(tmp_path, base, head, "fixtures/new.png"))
    assert not result.applied and "fixtures/new.png" in result.reason
    assert apply_patch(repo, _diff(tmp_path, base, head, "fixtures/new.png"), binaries_from=repo).applied is False


CHECK = "#!/bin/sh\nif cmp -s data.bin expected.bin; then echo '[ok]: data file (0 ms)'; else echo '[err]: data file'; fi\n"


def test_the_harness_fills_a_test_patchs_image_from_the_source_clone(tmp_path):
    """As on SWE-bench's Chart.js rows: the test patch adds a fixture as `Binary files ... differ`;
    the workspace (the base commit alone) lacks the blob, the source clone holds it."""
    repo = tmp_path / "repos" / "tiny__data"
    base = init_repo(repo, {"check.sh": CHECK, "data.bin": "placeholder\n"})
    (repo / "data.bin").write_bytes(PNG)
    git(repo, "add", "data.bin")
    git(repo, "commit", "-q", "-m", "the fix writes the data")
    fixed = git(repo, "rev-parse", "HEAD")
    (repo / "expected.bin").write_bytes(PNG)
    git(repo, "add", "expected.bin")
    git(repo, "commit", "-q", "-m", "the expected data")
    tested = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", base)
    test_patch = git(repo, "diff", fixed, tested) + "\n"
    assert "Binary files /dev/null and b/expected.bin differ" in test_patch
    script = (f"#!/bin/bash\ncd /testbed\ngit apply -v - <<'EOF_1'\n{test_patch}EOF_1\n"
              ": '>>>>> Start Test Output'\nsh check.sh\n: '>>>>> End Test Output'\n")
    task = Task(instance_id="tiny__data-1", repo="tiny/data", base_commit=base,
                patch=git(repo, "diff", "--binary", base, fixed) + "\n\n", test_patch=test_patch,
                FAIL_TO_PASS=["data file"], PASS_TO_PASS=[], log_parser="parse_log_redis", eval_script=script,
                env=EnvSpec(kind="native", commands_from="row"))
    ctx = build_context(EvalOptions(output_dir=tmp_path / "out", run_id="binary", repos_dir=tmp_path / "repos",
                                    timeout=120))
    gold = run_tests(task, task.patch, ctx)
    assert gold.status_map == {"data file": "PASSED"}, gold.reason
    assert run_tests(task, None, ctx).status_map == {"data file": "FAILED"}
