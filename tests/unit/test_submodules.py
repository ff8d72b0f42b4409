"""A submodule the snapshot lacks, filled from its own local clone at the commit the base records."""

from __future__ import annotations

from pathlib import Path

from issuebench.harness.submodules import fill_submodules
from issuebench.patch.apply import apply_patch
from issuebench.patch.submodule_moves import submodule_moves
from tests.gitrepo import git, init_repo


def test_the_submodule_folder_gets_the_recorded_commits_files(tmp_path):
    lib = tmp_path / "repos" / "acme__lib"
    old = init_repo(lib, {"lib.c": "int v(void) { return 1; }\n"})
    (lib / "lib.c").write_text("int v(void) { return 2; }\n")
    git(lib, "commit", "-qam", "newer")
    app = tmp_path / "app"
    base = init_repo(app, {"main.c": "int main(void) { return 0; }\n"})
    git(app, "update-index", "--add", "--cacheinfo", f"160000,{old},vendor/lib")
    git(app, "commit", "-qm", "vendor lib")
    base = git(app, "rev-parse", "HEAD")
    notes = fill_submodules({"vendor/lib": "acme/lib", "vendor/none": "acme/lib"}, app, base, tmp_path / "repos",
                            allow_clone=False)
    # The recorded commit's file, not the clone's newest.
    assert (app / "vendor" / "lib" / "lib.c").read_text() == "int v(void) { return 1; }\n"
    assert notes == [f"submodule vendor/lib filled from acme/lib at {old[:12]}",
                     "submodule vendor/none: the base commit records none there"]


def _fill_vendored(tmp_path: Path, commit: str, repos: str) -> tuple[Path, list[str]]:
    """An app whose vendor/lib records `commit` of acme/lib, filled from tmp_path/repos: (app, notes)."""
    app = tmp_path / "app"
    init_repo(app, {"main.c": "\n"})
    git(app, "update-index", "--add", "--cacheinfo", f"160000,{commit},vendor/lib")
    git(app, "commit", "-qm", "vendor lib")
    return app, fill_submodules({"vendor/lib": "acme/lib"}, app, git(app, "rev-parse", "HEAD"), tmp_path / repos,
                                allow_clone=False)


def test_a_missing_clone_is_said(tmp_path):
    _, notes = _fill_vendored(tmp_path, "1" * 40, "none")
    assert notes[0].startswith("submodule vendor/lib not filled: no clone of acme/lib")


def test_a_file_the_clone_lacks_leaves_the_rest_filled(tmp_path):
    """A snapshot leaves out files of 4 MiB and more (mbedtls's generated test data): the archive of
    the whole commit failed, and the submodule folder stayed empty."""
    lib = tmp_path / "repos" / "acme__lib"
    old = init_repo(lib, {"include/lib.h": "int v(void);\n", "tests/big.data": "lots of data\n"})
    blob = git(lib, "rev-parse", f"{old}:tests/big.data")
    (lib / ".git" / "objects" / blob[:2] / blob[2:]).unlink()   # a new repository's objects are loose
    app, notes = _fill_vendored(tmp_path, old, "repos")
    assert (app / "vendor" / "lib" / "include" / "lib.h").read_text() == "int v(void);\n"
    assert not (app / "vendor" / "lib" / "tests" / "big.data").exists()
    assert notes == [f"submodule vendor/lib filled from acme/lib at {old[:12]} (without 1 files the clone lacks: "
                     "tests/big.data)"]


def test_a_binary_patch_before_another_file_still_applies_once_put_back_together(tmp_path):
    """submodule_moves puts a patch back together from its parsed sections: a `GIT binary patch`
    section lost the empty line that ends its last hunk, and with another file after it git
    refused the whole patch as corrupt (mplhep's baseline images, then their test file)."""
    repo = tmp_path / "r"
    init_repo(repo, {"tests/baseline/plot.png": "", "tests/test_plot.py": "def test():\n    pass\n"})
    (repo / "tests/baseline/plot.png").write_bytes(bytes(range(256)) * 40)
    (repo / "tests/test_plot.py").write_text("def test():\n    assert True\n")
    text = git(repo, "diff", "--binary", "--full-index")
    assert "GIT binary patch" in text and text.index("plot.png") < text.index("test_plot.py")
    git(repo, "checkout", "--", ".")
    rest, moves = submodule_moves(text)
    assert moves == {}
    result = apply_patch(repo, rest)
    assert result.applied, result.log
    assert (repo / "tests/baseline/plot.png").read_bytes() == bytes(range(256)) * 40
