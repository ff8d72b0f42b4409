"""JavaScript parsers on real runner output (tests/fixtures/parsers, made by
scripts/parser_fixtures.sh: each fixture is what the named runner printed for a tiny suite run
with the flags the SWE-bench Multilingual / Multimodal rows use), and on lines in the rows' shape
holding real row ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from issuebench.models import Task, TestStatus
from issuebench.parsers import get_parser

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED
FIXTURES = Path(__file__).parents[1] / "fixtures" / "parsers"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_jest_verbose_real_output() -> None:
    """jest 30 `--verbose` (babel, docusaurus): the title alone, durations cut; jest's own
    `○ skipped` word stays in the id, as in the reference; `✎ todo` tests are not recorded."""
    assert get_parser("jest")(fixture("jest_verbose.txt")) == {
        "fixed range": P,
        "sliced sequence works even on filtered sequence": F,
        "skipped open range": S,
        "stepped range": P,
        "accepts valid link": P,
        "accepts valid non-strict link with anchor": F,
    }


def test_jest_row_ids() -> None:
    """Lines in jest's shape holding ids of babel__babel-13928 and facebook__docusaurus-10130."""
    log = ("    ✓ es2015/yield/yield following arrow in params (12 ms)\n"
           "    ✕ es2017/async functions/await following arrow inside params (3ms)\n"
           "  ✓ accepts valid non-strict link with anchor\n")
    assert get_parser("parse_log_jest")(log) == {
        "es2015/yield/yield following arrow in params": P,
        "es2017/async functions/await following arrow inside params": F,
        "accepts valid non-strict link with anchor": P,
    }


def test_jest_json_real_output_through_jq() -> None:
    """`jest --json` turned by a jq filter into `[STATUS] full name` lines (immutable-js 2005);
    pending and todo tests are not recorded."""
    assert get_parser("jest_json")(fixture("jest_json.txt")) == {
        "Range fixed range": P,
        "Range sliced sequence works even on filtered sequence": F,
        "Range nested stepped range": P,
        "accepts valid link": P,
        "accepts valid non-strict link with anchor": F,
    }


def test_immutable_js_picks_the_rows_runner_by_task() -> None:
    verbose, as_json = fixture("jest_verbose.txt"), fixture("jest_json.txt")
    task_2006 = Task(instance_id="immutable-js__immutable-js-2006", repo="immutable-js/immutable-js",
                     base_commit="0" * 40)
    task_2005 = task_2006.model_copy(update={"instance_id": "immutable-js__immutable-js-2005"})
    assert get_parser("immutable_js", task_2006)(verbose + as_json) == get_parser("jest")(verbose + as_json)
    assert get_parser("immutable_js", task_2005)(verbose + as_json) == get_parser("jest_json")(verbose)  \
        | get_parser("jest_json")(as_json)
    # Without a task (the harness's one-argument call) both forms are read.
    both = get_parser("immutable_js")(verbose + as_json)
    assert both["fixed range"] is P and both["Range fixed range"] is P


def test_vitest_verbose_real_output() -> None:
    """vitest 2 (as vuejs/core used) and vitest 4 (`NO_COLOR=1`; it also lists skipped tests and
    durations): the id is `file > describe > title`, as in the vuejs rows."""
    spec = "packages/runtime-core/__tests__/apiWatch.spec.ts > api: watch > "
    assert get_parser("vitest")(fixture("vitest_verbose.txt")) == {
        spec + "effect": P,
        spec + "should be executed correctly": F,
        spec + "deep > watching single source: getter": P,
    }
    assert get_parser("vitest")(fixture("vitest4_verbose.txt")) == {
        spec + "effect": P,
        spec + "should be executed correctly": F,
        spec + "watching single source: ref": S,
        spec + "deep > watching single source: getter": P,
    }


def test_karma_mocha_reporter_real_output() -> None:
    """karma + karma-mocha-reporter in headless Chromium (preact): blocks joined with ` > `. The
    reporter marks a skipped test `✖ ... (skipped)`, which reads as failed, as in the reference."""
    assert get_parser("karma")(fixture("karma_mocha.txt")) == {
        "memo() > should have isReactComponent flag": P,
        "memo() > should not unnecessarily reorder children #2895": F,
        "memo() > should support custom comparer functions (skipped)": F,
        "memo() > refs > should support adding refs": P,
        # The reference's rule: a shallower describe closes one block and opens none.
        "memo() > should clear falsy attributes": P,
    }


def test_karma_reads_nothing_before_the_browser_starts_or_after_the_summary() -> None:
    log = ("    ✔ before start\nINFO Starting browser ChromeHeadless\n  Components\n    Component construction\n"
           "      ✔ should update parent c.base if first child becomes non-null\n"
           "      ✖ should be a VNode with a Component child\nSUMMARY:\n  Later\n    ✔ after summary\n")
    assert get_parser("karma")(log) == {
        "Components > Component construction > should update parent c.base if first child becomes non-null": P,
        "Components > Component construction > should be a VNode with a Component child": F,
    }
    # A dedent below every open block does not fail (the reference raises on it).
    assert get_parser("karma")("Starting browser\n      deep\n   mid\n  top\n ✔ x\n") == {"x": P}


def test_tap_real_output_of_mocha_and_qunit() -> None:
    """mocha `-R tap` (axios) and qunit's CLI (three.js); a `# SKIP` directive stays in the id."""
    assert get_parser("tap")(fixture("mocha_tap.txt")) == {
        "supports http with nodejs should respect the timeout property": P,
        "supports http with nodejs should respect the timeoutErrorMessage property": F,
        "supports http with nodejs should parse the timeout property # SKIP -": P,
        "supports http with nodejs compression should support gunzip error handling": P,
    }
    assert get_parser("tap")(fixture("qunit_tap.txt")) == {
        "Objects > Line > Extending": P,
        "Objects > Line > copy/material": F,
        "Objects > Line > isLine # SKIP": P,
    }


def test_calypso_real_output_of_npm_run_and_jest_23() -> None:
    """`npm run test-client` running jest 23 verbosely: blocks and title joined with ` - `."""
    assert get_parser("calypso")(fixture("calypso_jest.txt")) == {
        "reducer - should store data from the action": P,
        "reducer - should use default value for settings with no value": F,
        "reducer - #emailSettingsSubmitSettings() - should dispatch an success action": P,
        "actions - #fetchEmailSettings() - should dispatch an request action": P,
    }
    # Nothing before npm's echo of the jest command line is read.
    assert get_parser("calypso")(fixture("jest_verbose.txt")) == {}


def test_calypso_stops_each_run_at_its_first_failure_report() -> None:
    """Automattic__wp-calypso-21648's ids; the part after `  ● ` is not read (the reference's rule)."""
    log = ("> NODE_ENV=test ./node_modules/.bin/jest -c=test/client/jest.config.json\n"
           "  actions\n    #emailSettingsSubmitSettings()\n      ✓ should dispatch an success action (4ms)\n"
           "  ● actions › x\n      ✓ not read (1ms)\n"
           " ./node_modules/.bin/jest --again\n  reducer\n"
           "    ✕ should use default value for settings with no value or default if option is enabled (12ms)\n")
    assert get_parser("calypso")(log) == {
        "actions - #emailSettingsSubmitSettings() - should dispatch an success action": P,
        "reducer - should use default value for settings with no value or default if option is enabled": F,
    }


def test_chart_js_real_karma_progress_output() -> None:
    """karma's progress reporter in a windowed Chromium under xvfb (Chart.js); colours and cursor
    codes are stripped; the id keeps the space before FAILED, as the rows' ids do."""
    assert get_parser("chart_js")(fixture("karma_jasmine.txt")) == {
        "Chart.controllers.bar auto /base/test/fixtures/controller.bar/baseLine/bottom.js ": F,
        "Legend block tests callbacks should call onLeave when the mouse leaves the canvas ": F,
    }


def test_chart_js_row_ids_on_old_chrome_lines() -> None:
    log = ("\x1b[31mChrome 108.0.5359.124 (Linux x86_64) Chart.controllers.bubble auto "
           "/base/test/fixtures/controller.bubble/radius-data.js FAILED\x1b[39m\n"
           "Chrome 108.0.5359.124 (Linux x86_64): Executed 3 of 9 (1 FAILED)\n"
           "Chrome Headless 108 (Linux) not this form FAILED\n")
    assert get_parser("chart_js")(log) == {
        "Chart.controllers.bubble auto /base/test/fixtures/controller.bubble/radius-data.js ": F}


def test_marked_real_jasmine_output() -> None:
    """jasmine `--no-color` (marked): numbered failures; its numbered pending list reads as
    failed too (the reference's rule); a clean run records nothing (`fail_only`)."""
    assert get_parser("marked")(fixture("jasmine.txt")) == {
        "New list_loose_tasks should pass": F,
        "Marked Table cells should pass example 9": F,
        "New fences_following_list should pass": F,
    }
    assert get_parser("parse_log_marked")(fixture("jasmine_clean.txt")) == {}


def test_p5js_real_mocha_spec_failures() -> None:
    """mocha's spec reporter (p5.js runs it through grunt): each failure report's indented lines
    joined with `:`, as in the p5.js rows; the numbered lines of the result list are not ids."""
    assert get_parser("p5js")(fixture("mocha_spec.txt")) == {
        "docs preprocessor:mergeOverloadedMethods():should not merge properties": F,
        "helpers/modeAdjust:should set mode to corners": F,
    }


def test_p5js_drops_json_and_xml_blocks_before_reading_failures() -> None:
    """processing__p5.js-3709 ids; a printed JSON object and DOM nodes would otherwise hide them."""
    log = ("  1) Core\n       p5.prototype._createFriendlyGlobalFunctionBinder\n"
           "         should NOT warn when globals already exist:\n     AssertionError\n"
           "  {\n    \"key\": 1\n}\n"
           "<div><div><span>  9) not\n   a test:</span></div>\n"
           "  2) helpers/modeAdjust\n       should set mode to corners:\n")
    assert get_parser("p5js")(log) == {
        "Core:p5.prototype._createFriendlyGlobalFunctionBinder:should NOT warn when globals already exist": F,
        "helpers/modeAdjust:should set mode to corners": F,
    }


def test_react_pdf_real_jest_file_lines() -> None:
    """jest without `--verbose` over several files (react-pdf): one id per test file."""
    assert get_parser("react_pdf")(fixture("jest_files.txt")) == {
        "__tests__/range.test.js": F, "__tests__/links.test.js": F}
    log = ("PASS packages/stylesheet/tests/expand.test.js (5.123 s)\n"
           "FAIL packages/layout/tests/node/setAspectRatio.test.js (12.5s)\n"
           "PASS packages/image/tests/cache.test.js (310ms)\n")
    assert get_parser("react_pdf")(log) == {
        "packages/stylesheet/tests/expand.test.js": P,
        "packages/layout/tests/node/setAspectRatio.test.js": F,
        "packages/image/tests/cache.test.js": P,
    }


@pytest.mark.parametrize("name", ["jest", "vitest", "karma", "tap", "calypso", "chart_js", "marked",
                                  "p5js", "react_pdf", "immutable_js", "jest_json"])
def test_js_parsers_read_nothing_from_unrelated_text(name: str) -> None:
    assert get_parser(name)("npm ERR! missing script: test\nDone in 0.3s.\n") == {}
