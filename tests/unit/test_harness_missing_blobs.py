"""A clone that lacks some of a commit's files (a snapshot without big files) is completed from
objects whose ids match exactly, or refused with the files named."""

import pytest

from issuebench.errors import IssuebenchError
from issuebench.harness import blob_completion as missing_blobs
from issuebench.harness.workspace import create_workspace, workspace_notes
from tests.gitrepo import init_repo


def _drop_object(repo, sha):
    (repo / ".git" / "objects" / sha[:2] / sha[2:]).unlink()


def test_missing_blobs_are_found_and_a_matching_copy_completes_the_checkout(tmp_path, monkeypatch):
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    src = tmp_path / "src"
    big = "x" * 5000 + "\n"
    base = init_repo(src, {"pkg/data/big.h5": big, "pkg/mod.py": "x = 1\n"})
    sha = missing_blobs.git_blob_id(big.encode())
    _drop_object(src, sha)
    assert missing_blobs.missing_blobs(src, base) == [("pkg/data/big.h5", sha)]

    with pytest.raises(IssuebenchError, match=r"lacks 1 files .*pkg/data/big.h5"):
        create_workspace(src, base, tmp_path / "w")

    # What a release sdist would give: the same bytes, so the same blob id.
    def fake_release(source, commit, repo, when):
        store = missing_blobs.store_for(source)
        missing_blobs._write_blob(store, big.encode())
        return missing_blobs.Completion(store, [], ["pkg 1.0"], [("pkg/data/big.h5", sha)])

    monkeypatch.setattr("issuebench.harness.workspace.complete", fake_release)
    ws = create_workspace(src, base, tmp_path / "w", repo="o/pkg", when="2023-01-01T00:00:00Z")
    assert (ws / "pkg" / "data" / "big.h5").read_text() == big
    assert "pkg 1.0" in workspace_notes(ws)[0] and "blob id" in workspace_notes(ws)[0]


def test_release_members_count_only_with_the_commits_own_blob_id(tmp_path, monkeypatch):
    import tarfile

    archive = tmp_path / "pkg-1.0.tar.gz"
    good, stale = tmp_path / "good", tmp_path / "stale"
    good.write_text("right\n")
    stale.write_text("old contents\n")
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(good, arcname="pkg-1.0/pkg/a.dat")
        tf.add(stale, arcname="pkg-1.0/pkg/b.dat")
    monkeypatch.setattr("issuebench.harness.blob_completion.download_sdist", lambda name, version, dest: archive)
    wanted = [("pkg/a.dat", missing_blobs.git_blob_id(b"right\n")),
              ("pkg/b.dat", missing_blobs.git_blob_id(b"new contents\n"))]
    found = missing_blobs._blobs_in_release("pkg", "1.0", wanted)
    assert list(found.values()) == [b"right\n"]
