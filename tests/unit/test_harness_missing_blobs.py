"""A clone that lacks some of a commit's files (a snapshot without big files) is completed from
objects whose ids match exactly; files nothing holds are left out of the workspace, said in its
notes, and looked for in the releases only once."""

import shutil
import subprocess

from issuebench.harness import blob_completion as missing_blobs
from issuebench.harness.workspace import create_workspace, workspace_notes
from tests.gitrepo import init_repo


def _drop_object(repo, sha):
    (repo / ".git" / "objects" / sha[:2] / sha[2:]).unlink()


def _clone_lacking(src, content: str, path: str = "pkg/data/big.h5"):
    """A clone whose commit names `path` (with `content`) but holds no object for it: (base, blob id)."""
    base = init_repo(src, {path: content, "pkg/mod.py": "x = 1\n"})
    sha = missing_blobs.git_blob_id(content.encode())
    _drop_object(src, sha)
    return base, sha


def test_missing_blobs_are_found_and_a_matching_copy_completes_the_checkout(tmp_path, monkeypatch):
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    src = tmp_path / "src"
    big = "x" * 5000 + "\n"
    base, sha = _clone_lacking(src, big)
    assert missing_blobs.missing_blobs(src, base) == [("pkg/data/big.h5", sha)]

    # Nothing holds the file: the workspace has every other one, and says which it lacks.
    partial = create_workspace(src, base, tmp_path / "w")
    assert (partial / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert not (partial / "pkg" / "data" / "big.h5").exists()
    assert "lacks 1 files" in workspace_notes(partial)[0] and "pkg/data/big.h5" in workspace_notes(partial)[0]
    assert subprocess.run(["git", "remote"], cwd=partial, capture_output=True, text=True).stdout == ""
    # The model's patch and the harness's own git still work in it.
    assert subprocess.run(["git", "diff", "--quiet"], cwd=partial).returncode == 0

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
    assert list(found.exact.values()) == [b"right\n"]
    assert found.same_path == {"pkg/b.dat": b"old contents\n"}  # another version: a stand-in at most


def test_a_file_no_release_holds_is_looked_for_once(tmp_path, monkeypatch):
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    src = tmp_path / "src"
    base, _ = _clone_lacking(src, "y" * 5000 + "\n")
    searched = []
    monkeypatch.setattr(missing_blobs, "_releases_nearest", lambda name, when: searched.append(name) or ["1.0"])
    monkeypatch.setattr(missing_blobs, "_blobs_in_release", lambda name, version, wanted: missing_blobs.ReleaseFiles())
    first = missing_blobs.complete(src, base, "o/pkg", "2023-01-01T00:00:00Z")
    assert [p for p, _ in first.missing] == ["pkg/data/big.h5"] and searched
    searched.clear()
    again = missing_blobs.complete(src, base, "o/pkg", "2023-01-01T00:00:00Z")
    assert [p for p, _ in again.missing] == ["pkg/data/big.h5"] and searched == []


def test_two_workers_completing_one_clone_search_the_releases_once(tmp_path, monkeypatch):
    import threading
    import time

    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    src = tmp_path / "src"
    big = "z" * 5000 + "\n"
    base, sha = _clone_lacking(src, big)
    downloads = []

    def release(name, version, wanted):
        downloads.append(version)
        time.sleep(0.5)  # a download: the other worker arrives while it runs
        return missing_blobs.ReleaseFiles(exact={sha: big.encode()})

    monkeypatch.setattr(missing_blobs, "_releases_nearest", lambda name, when: ["1.0"])
    monkeypatch.setattr(missing_blobs, "_blobs_in_release", release)
    results = []
    workers = [threading.Thread(target=lambda: results.append(
        missing_blobs.complete(src, base, "o/pkg", "2023-01-01T00:00:00Z"))) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert downloads == ["1.0"]
    assert [r.missing for r in results] == [[], []]
    assert all(r.filled == [("pkg/data/big.h5", sha)] for r in results)


def test_releases_are_tried_nearest_first_on_both_sides_of_the_date(monkeypatch):
    """A file new since the last release is only in the next one: with many releases before the
    date, the first one after it is still among those tried."""
    times = {f"1.{i}": f"2020-0{i + 1}-01T00:00:00Z" for i in range(9)} | {"2.0": "2021-06-01T00:00:00Z",
                                                                          "2.1": "2021-09-01T00:00:00Z"}
    monkeypatch.setattr(missing_blobs, "fetch_upload_times", lambda name: times)
    order = missing_blobs._releases_nearest("pkg", "2021-01-01T00:00:00Z")
    assert order[:4] == ["1.8", "2.0", "1.7", "2.1"]
    assert len(order) == missing_blobs.MAX_RELEASES
    assert missing_blobs._releases_nearest("pkg", None)[:2] == ["2.1", "2.0"]


def test_a_file_whose_bytes_no_release_holds_gets_the_nearest_releases_version_said_as_a_stand_in(
        tmp_path, monkeypatch):
    import tarfile

    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    src = tmp_path / "src"
    table = "1962 0.1\n" * 700  # a data table the commit changed after the last release
    base, _ = _clone_lacking(src, table, "pkg/data/table.dat")
    released = tmp_path / "released.dat"
    released.write_text(table + "2023 0.2\n")
    archive = tmp_path / "pkg-2.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(released, arcname="pkg-2.0/pkg/data/table.dat")
    monkeypatch.setattr(missing_blobs, "_releases_nearest", lambda name, when: ["2.0"])
    monkeypatch.setattr(missing_blobs, "download_sdist", lambda name, version, dest: archive)

    for _ in range(2):  # searched, then read from what the search recorded
        ws = create_workspace(src, base, tmp_path / "w", repo="o/pkg", when="2023-01-01T00:00:00Z")
        assert (ws / "pkg" / "data" / "table.dat").read_text() == table + "2023 0.2\n"
        assert any("stand-in" in note and "pkg 2.0" in note for note in workspace_notes(ws)), workspace_notes(ws)
        status = subprocess.run(["git", "status", "--porcelain"], cwd=ws, capture_output=True, text=True)
        assert status.stdout == ""  # a diff of the workspace never carries the stand-in
        shutil.rmtree(tmp_path / "home" / "templates")  # the next checkout is made anew


def test_a_search_recorded_before_stand_ins_existed_is_made_again(tmp_path, monkeypatch):
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    src = tmp_path / "src"
    base, sha = _clone_lacking(src, "w" * 5000 + "\n")
    store = missing_blobs.store_for(src)
    (missing_blobs._searched(store) / sha).write_text("not in the releases of o/pkg near 2023-01-01\n")
    searched = []
    monkeypatch.setattr(missing_blobs, "_releases_nearest", lambda name, when: searched.append(name) or ["1.0"])
    monkeypatch.setattr(missing_blobs, "_blobs_in_release",
                        lambda name, version, wanted: missing_blobs.ReleaseFiles(same_path={"pkg/data/big.h5": b"v1\n"}))
    done = missing_blobs.complete(src, base, "o/pkg", "2023-01-01T00:00:00Z")
    assert searched and [(p, r) for p, _, r in done.stand_ins] == [("pkg/data/big.h5", "pkg 1.0")]
