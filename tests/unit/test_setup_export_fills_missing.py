"""Setup's export of a clone that lacks some of a commit's files (a snapshot without big files)
takes them from the project's releases, as the harness's workspaces do: astropy's IERS table
missing failed every time test, and no environment was accepted."""

from __future__ import annotations

import tarfile
from pathlib import Path

from issuebench.harness import blob_completion
from issuebench.setup.source import SourceTree
from tests.gitrepo import init_repo


def _archive(tmp_path: Path, members: dict[str, str]) -> Path:
    archive = tmp_path / "pkg-2.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        for name, text in members.items():
            member = tmp_path / "member"
            member.write_text(text)
            tf.add(member, arcname=f"pkg-2.0/{name}")
    return archive


def test_an_export_takes_the_files_the_clone_lacks_from_the_releases(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    src = tmp_path / "o__pkg"
    exact, changed = "leap seconds\n" * 500, "1962 0.1\n" * 700
    base = init_repo(src, {"pkg/data/leap.dat": exact, "pkg/data/table.dat": changed, "pkg/mod.py": "x = 1\n"})
    for text in (exact, changed):
        sha = blob_completion.git_blob_id(text.encode())
        (src / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    archive = _archive(tmp_path, {"pkg/data/leap.dat": exact, "pkg/data/table.dat": changed + "2023 0.2\n"})
    monkeypatch.setattr(blob_completion, "_releases_nearest", lambda name, when: ["2.0"])
    monkeypatch.setattr(blob_completion, "download_sdist", lambda name, version, dest: archive)

    tree = SourceTree.open(src, base)
    assert sorted(tree.missing_files()) == ["pkg/data/leap.dat", "pkg/data/table.dat"]
    out = tree.export(tmp_path / "export")
    assert (out / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert (out / "pkg" / "data" / "leap.dat").read_text() == exact                    # the commit's bytes
    assert (out / "pkg" / "data" / "table.dat").read_text() == changed + "2023 0.2\n"  # the release's stand-in


def test_an_export_goes_on_without_what_no_release_holds(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ISSUEBENCH_HOME", str(tmp_path / "home"))
    src = tmp_path / "o__pkg"
    lost = "nowhere\n" * 100
    base = init_repo(src, {"pkg/data/lost.dat": lost, "pkg/mod.py": "x = 1\n"})
    sha = blob_completion.git_blob_id(lost.encode())
    (src / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    monkeypatch.setattr(blob_completion, "_releases_nearest", lambda name, when: [])

    out = SourceTree.open(src, base).export(tmp_path / "export")
    assert (out / "pkg" / "mod.py").is_file() and not (out / "pkg" / "data" / "lost.dat").exists()


def test_an_export_leaves_out_a_link_out_of_the_tree_and_keeps_the_rest(tmp_path) -> None:
    import os
    import subprocess

    # TatSu's RULES.md is a link into its author's home: every setup of it stopped at the export.
    src = tmp_path / "o__pkg"
    init_repo(src, {"pkg/mod.py": "x = 1\n", "docs/rules.md": "rules\n"})
    os.symlink("/Users/someone/RULES.md", src / "RULES.md")
    os.symlink("docs/rules.md", src / "RULES2.md")
    os.symlink("../../etc/passwd", src / "pkg" / "up.txt")
    subprocess.run(["git", "add", "-A"], cwd=src, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "links"], cwd=src, check=True)

    out = SourceTree.open(src).export(tmp_path / "export")
    assert (out / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert (out / "RULES2.md").read_text() == "rules\n"           # a link inside the tree stays
    assert not os.path.lexists(out / "RULES.md") and not os.path.lexists(out / "pkg" / "up.txt")
