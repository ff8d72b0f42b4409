"""Setup of a JavaScript repository at a commit: the recipe from package.json (runner, lockfile,
engines), checked by building the node environment and running the suite; `eval --setup-fallback`
then covers a JavaScript row without a recipe. A tiny npm project with mocha from the registry."""

from __future__ import annotations

import json

import pytest

from issuebench.envs import EnvBuilder
from issuebench.harness import EvalOptions, build_context, run_tests
from issuebench.models import Task
from issuebench.sandbox import get_sandbox
from issuebench.setup import fallback_spec, setup_repository
from tests.gitrepo import commit_files, diff_between, init_repo

pytestmark = [pytest.mark.network, pytest.mark.slow]

PACKAGE = {"name": "tiny", "version": "1.0.0", "engines": {"node": ">=12"},
           "scripts": {"test": "mocha test"}, "devDependencies": {"mocha": "7.2.0"}}
TESTS = """const assert = require('assert');
const add = require('../add');
describe('add', () => {
  it('adds small numbers', () => assert.strictEqual(add(1, 2), 3));
  it('adds negative numbers', () => assert.strictEqual(add(-1, -2), -3));
});
"""


def _project(path):
    return init_repo(path, {"package.json": json.dumps(PACKAGE), "add.js": "module.exports = (a, b) => a + b;\n",
                            "test/add.test.js": TESTS.replace("(-1, -2), -3", "(-1, -2), -4")},
                     date="2020-06-01T00:00:00Z")


def test_setup_finds_the_runner_builds_and_runs_the_suite(tmp_path):
    repo = tmp_path / "tiny"
    commit = _project(repo)
    builder = EnvBuilder(cache_dir=tmp_path / "envs", sandbox=get_sandbox())
    result = setup_repository(repo, commit=commit, date="2020-06-01T00:00:00Z", builder=builder)
    assert result.success, result.reason
    assert result.spec.kind == "node" and result.spec.log_parser == "tap"
    assert result.python is None          # said as "node", not as the Python field's default
    assert result.spec.test_cmd.startswith("./node_modules/.bin/mocha -R tap")
    assert result.tests_passed == 1 and result.failing_tests == ["add adds negative numbers"]


def test_eval_setup_fallback_covers_a_javascript_row_without_a_recipe(tmp_path):
    repo = tmp_path / "repos" / "tiny__js"
    base = init_repo(repo, {"package.json": json.dumps(PACKAGE), "add.js": "module.exports = (a, b) => a + b;\n",
                            "test/add.test.js": TESTS.replace("  it('adds negative numbers', () => "
                                                              "assert.strictEqual(add(-1, -2), -3));\n", "")},
                     date="2020-06-01T00:00:00Z")
    fixed = commit_files(repo, {"add.js": "module.exports = (a, b) => a + b + (a < 0 ? -1 : 0);\n"}, "fix")
    tested = commit_files(repo, {"test/add.test.js": TESTS.replace("(-1, -2), -3", "(-1, -2), -4")}, "test")
    task = Task(instance_id="tiny__js-1", repo="tiny/js", base_commit=base, created_at="2020-06-01T00:00:00Z",
                patch=diff_between(repo, base, fixed), test_patch=diff_between(repo, fixed, tested),
                FAIL_TO_PASS=["add adds negative numbers"], PASS_TO_PASS=["add adds small numbers"])
    ctx = build_context(EvalOptions(output_dir=tmp_path / "out", run_id="js", repos_dir=tmp_path / "repos",
                                    timeout=300, setup_fallback=fallback_spec))
    run = run_tests(task, task.patch, ctx)
    assert run.status_map.get("add adds negative numbers") == "PASSED", run.reason
    assert any(note.startswith("setup fallback") for note in run.notes)


def test_the_suite_runs_where_scripts_test_points_its_runner(tmp_path):
    # terser's layout: `node test/compress.js && mocha test/mocha`; mocha's own default (./test)
    # holds no mocha file there, so a run of the runner alone passes nothing.
    package = {**PACKAGE, "scripts": {"test": "node test/check.js && mocha --timeout 5000 test/mocha"}}
    repo = tmp_path / "tiny"
    commit = init_repo(repo, {"package.json": json.dumps(package), "add.js": "module.exports = (a, b) => a + b;\n",
                              "test/check.js": "process.exit(0);\n",
                              "test/mocha/add.test.js": TESTS.replace("'../add'", "'../../add'")},
                       date="2020-06-01T00:00:00Z")
    builder = EnvBuilder(cache_dir=tmp_path / "envs", sandbox=get_sandbox())
    result = setup_repository(repo, commit=commit, date="2020-06-01T00:00:00Z", builder=builder)
    assert result.success, result.reason
    assert result.test_args == ["test/mocha"]      # not the option's value 5000
    assert result.suite_command.endswith("-R tap test/mocha") and result.tests_passed == 2


def test_a_tool_that_writes_under_node_modules_runs(tmp_path):
    # vite (under vitest) bundles its config into node_modules/.vite-temp at every start; the
    # environment's node_modules is read-only in the run (citty: EROFS, no test ran).
    writes = """const assert = require('assert');
const fs = require('fs');
const path = require('path');
describe('vite-like', () => {
  it('bundles its config under node_modules', () => {
    const dir = path.join(__dirname, '..', 'node_modules', '.vite-temp');
    fs.mkdirSync(dir, {recursive: true});
    fs.writeFileSync(path.join(dir, 'config.mjs'), 'export default {}');
    assert.strictEqual(fs.readFileSync(path.join(dir, 'config.mjs'), 'utf8'), 'export default {}');
  });
});
"""
    repo = tmp_path / "tiny"
    commit = init_repo(repo, {"package.json": json.dumps(PACKAGE), "add.js": "module.exports = (a, b) => a + b;\n",
                              "test/vite.test.js": writes}, date="2020-06-01T00:00:00Z")
    builder = EnvBuilder(cache_dir=tmp_path / "envs", sandbox=get_sandbox())
    result = setup_repository(repo, commit=commit, date="2020-06-01T00:00:00Z", builder=builder)
    assert result.success, result.reason
    assert result.tests_passed == 1 and result.failing_tests == []


def test_a_build_step_scripts_test_runs_before_its_runner_runs_before_the_tests(tmp_path):
    # node-sql-parser: `npm run lint && npm run build:pegjs && mochapack ...`: the tests import the
    # parsers its grammar generates; without the step, no test passed at the commit.
    package = {**PACKAGE, "scripts": {"test": "npm run lint && npm run build:gen && mocha test",
                                      "lint": "exit 3", "build:gen": "node gen.js"}}
    repo = tmp_path / "tiny"
    commit = init_repo(repo, {"package.json": json.dumps(package),
                              "gen.js": "require('fs').writeFileSync('add.js', 'module.exports = (a, b) => a + b;\\n');\n",
                              "test/add.test.js": TESTS.replace("  it('adds negative numbers', () => "
                                                                "assert.strictEqual(add(-1, -2), -3));\n", "")},
                       date="2020-06-01T00:00:00Z")
    builder = EnvBuilder(cache_dir=tmp_path / "envs", sandbox=get_sandbox())
    result = setup_repository(repo, commit=commit, date="2020-06-01T00:00:00Z", builder=builder)
    assert result.success, result.reason
    assert result.spec.pre_test == ["npm run build:gen"] and result.tests_passed == 1
