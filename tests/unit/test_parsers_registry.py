"""The registry knows every parser the SWE-bench Multilingual and Multimodal rows name, the
reference's parser for each of their repositories, and binds a task to the parsers that read it."""

from __future__ import annotations

import pytest

from issuebench.models import Task
from issuebench.parsers import get_parser, known_parsers, parser_for_repo

# Every `log_parser` value of the Multilingual (test) and Multimodal (dev) rows.
ROW_PARSERS = [
    "parse_log_ant", "parse_log_calypso", "parse_log_cargo", "parse_log_chart_js", "parse_log_doctest",
    "parse_log_googletest", "parse_log_gotest", "parse_log_gradle_custom", "parse_log_immutable_js",
    "parse_log_jekyll", "parse_log_jest", "parse_log_jq", "parse_log_karma", "parse_log_marked",
    "parse_log_maven", "parse_log_micropython_test", "parse_log_p5js", "parse_log_phpunit",
    "parse_log_react_pdf", "parse_log_redis", "parse_log_rspec_transformed_json", "parse_log_ruby_unit",
    "parse_log_tap", "parse_log_vitest",
]


@pytest.mark.parametrize("name", ROW_PARSERS)
def test_every_row_parser_is_registered_under_both_names(name: str) -> None:
    assert get_parser(name) is get_parser(name.removeprefix("parse_log_"))
    assert name in known_parsers()


@pytest.mark.parametrize(("repo", "name"), [
    ("preactjs/preact", "parse_log_karma"),
    ("vuejs/core", "parse_log_vitest"),
    ("mrdoob/three.js", "parse_log_tap"),
    ("Automattic/wp-calypso", "parse_log_calypso"),
    ("markedjs/marked", "parse_log_marked"),
    ("valkey-io/valkey", "parse_log_redis"),
    ("fmtlib/fmt", "parse_log_googletest"),
    ("gin-gonic/gin", "parse_log_gotest"),
    ("projectlombok/lombok", "parse_log_ant"),
    ("reactivex/rxjava", "parse_log_gradle_custom"),
    ("briannesbitt/carbon", "parse_log_phpunit"),
    ("faker-ruby/faker", "parse_log_ruby_unit"),
    ("jekyll/jekyll", "parse_log_jekyll"),
    ("tokio-rs/axum", "parse_log_cargo"),
    ("django/django", "parse_log_django"),
])
def test_parser_for_repo_knows_the_new_repositories(repo: str, name: str) -> None:
    assert parser_for_repo(repo) == name
    get_parser(name)


def test_a_task_is_bound_only_to_the_parsers_that_read_it() -> None:
    task = Task(instance_id="jekyll__jekyll-8771", repo="jekyll/jekyll", base_commit="0" * 40)
    assert get_parser("jest", task) is get_parser("jest")
    bound = get_parser("jekyll", task)
    assert bound is not get_parser("jekyll")
    log = "features/post_data.feature:6  Scenario: Use post.title variable ....\n"
    assert bound(log) == get_parser("cucumber")(log)


def test_suite_ran_reads_the_runners_closing_counts() -> None:
    """The real closing lines of karma, mocha (spec and TAP), jest and jasmine count; karma's
    `Executed 0 of 0` (a browser that died at once) and a log without counts do not."""
    from pathlib import Path

    from issuebench.parsers.evidence import suite_ran

    fixtures = Path(__file__).parents[1] / "fixtures" / "parsers"
    for name in ("karma_jasmine.txt", "mocha_spec.txt", "mocha_tap.txt", "jest_verbose.txt", "jasmine_clean.txt"):
        assert suite_ran((fixtures / name).read_text(encoding="utf-8")), name
    assert not suite_ran("Chrome 120.0 (Linux x86_64): Executed 0 of 0 ERROR\n")
    assert not suite_ran("Randomized with seed 1\nStarted\n0 specs, 0 failures\n")
