"""What a patch adds to package.json: new or re-ranged registry dependencies, nothing else."""

from __future__ import annotations

import json

from issuebench.envs.node_patched import added_dependencies
from tests.gitrepo import init_repo


def test_only_new_or_changed_registry_dependencies_count(tmp_path):
    base = {"name": "p", "dependencies": {"left-pad": "^1.0.0", "kept": "2.0.0"},
            "devDependencies": {"mocha": "^9.0.0"}}
    init_repo(tmp_path, {"package.json": json.dumps(base)})
    patched = {"name": "p", "dependencies": {"left-pad": "^1.3.0", "kept": "2.0.0", "@scope/new": "~3.1.0",
                                             "local": "file:../local", "sibling": "workspace:*",
                                             "remote": "git+https://example.invalid/x.git"},
               "devDependencies": {"mocha": "^9.0.0", "formdata-node": "^5.0.0"}}
    (tmp_path / "package.json").write_text(json.dumps(patched))
    assert added_dependencies(tmp_path) == {"@scope/new": "~3.1.0", "formdata-node": "^5.0.0",
                                            "left-pad": "^1.3.0"}


def test_an_untouched_or_unreadable_package_json_adds_nothing(tmp_path):
    init_repo(tmp_path, {"package.json": json.dumps({"dependencies": {"a": "1"}})})
    assert added_dependencies(tmp_path) == {}
    (tmp_path / "package.json").write_text("{ not json")
    assert added_dependencies(tmp_path) == {}
