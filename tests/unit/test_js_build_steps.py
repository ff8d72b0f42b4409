"""Which steps scripts.test runs before its runner are builds the tests need (run before every
test run), and which are checks or other tests (left out: they cost time and decide nothing)."""

from __future__ import annotations

from issuebench.setup.js_setup import build_steps, choose_runner


def test_a_grammar_build_before_the_runner_is_kept_and_the_lint_left_out() -> None:
    script = 'npm run lint && npm run build:pegjs && mochapack --reporter-option maxDiffSize=1000000 "test/**/*.spec.js"'
    assert choose_runner({"scripts": {"test": script}, "devDependencies": {"mocha": "10", "mochapack": "2"}})[0] \
        == "mochapack"
    assert build_steps(script, "mochapack") == ["npm run build:pegjs"]


def test_a_compile_before_the_runner_is_kept() -> None:
    assert build_steps("tsc && mocha dist/test", "mocha") == ["tsc"]
    assert build_steps("yarn build && jest", "jest") == ["yarn build"]


def test_checks_and_other_tests_before_the_runner_are_left_out() -> None:
    assert build_steps("node test/compress.js && mocha test/mocha", "mocha") == []       # terser's other suite
    assert build_steps("pnpm lint && pnpm test:types && vitest run --coverage", "vitest") == []
    assert build_steps("tsc --noEmit && jest", "jest") == []
    assert build_steps("npm run build && npm run test:unit", "jest") == []              # runner not named here
