"""A clone reached through a symlink named owner__name (how fetched clones are laid out) is named
by the link, and versions are read from that package's own version file, not only from tags."""

from __future__ import annotations

from issuebench.collect.mine import repo_slug, resolve_repo
from issuebench.collect.versions import assign_versions
from issuebench.models import Task
from tests.gitrepo import git, init_repo


def test_a_symlinked_clone_keeps_its_name_and_its_package_version(tmp_path):
    real = tmp_path / "store" / "repo"
    base = init_repo(real, {"acme/__init__.py": '__version__ = "1.2.0"\n', "README": "x\n"})
    git(real, "tag", "v0.9")   # a stale tag: the package's own file says 1.2
    link = tmp_path / "clones" / "acme__acme"
    link.parent.mkdir()
    link.symlink_to(real)

    repo_dir = resolve_repo(str(link))
    assert repo_dir.name == "acme__acme" and repo_slug(repo_dir) == "acme/acme"
    task = Task(instance_id="acme__acme-1", repo="acme/acme", base_commit=base)
    (dated,) = assign_versions(repo_dir, [task], repo="acme/acme")
    assert dated.version == "1.2"
    # The folder itself is named `repo`: only the repository's name finds the package.
    bare = Task(instance_id="acme__acme-2", repo="acme/acme", base_commit=base)
    assert assign_versions(real, [bare.model_copy()])[0].version == "0.9"
    assert assign_versions(real, [bare.model_copy()], repo="acme/acme")[0].version == "1.2"
