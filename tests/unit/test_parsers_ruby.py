"""Ruby parsers on real output of Debian's ruby 3.1 with minitest + shoulda-context, test-unit and
RSpec through the rows' jq filters (fixtures made by scripts/parser_fixtures.sh). jekyll's cucumber
formatter is jekyll's code and is not run: its lines are written from its output format."""

from __future__ import annotations

from pathlib import Path

from issuebench.models import Task, TestStatus
from issuebench.parsers import get_parser

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED
FIXTURES = Path(__file__).parents[1] / "fixtures" / "parsers"
WHERE = "TestFilters#test_: filters where_exp filter should "


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_minitest_verbose_real_output() -> None:
    """The jekyll rows' id shape; an error reads as failed; a skip (`= S`) reads as passed from
    the `.` of its duration, as in the reference."""
    assert get_parser("minitest")(fixture("minitest.txt")) == {
        WHERE + "filter objects appropriately": P,
        WHERE + "filter objects across multiple conditions": F,
        WHERE + "filter with other operators": P,
        WHERE + "raise on a bad expression": F,
    }


def test_test_unit_verbose_real_output() -> None:
    """test-unit `-v` (fluentd, faker): omitted is skipped, pending is not recorded, data-driven
    tests keep their `[label]`, and a described test loses its `test: ` prefix."""
    assert get_parser("ruby_unit")(fixture("test_unit.txt")) == {
        "test_ENOENT_error_after_setup_watcher": P,
        "test_email_with_abbreviations": F,
        "test_logger_with_rotate_age[daily_age]": P,
        "test_logger_with_rotate_age[weekly_age]": P,
        "test_omitted": S,
        "test_raises": F,
        "when ack is expired": P,
    }


def test_rspec_json_through_jq_real_output() -> None:
    """`description - id - status` (fastlane's filter) and rubocop's grouped filter; pending is
    not recorded."""
    assert get_parser("rspec_transformed_json")(fixture("rspec_with_id.txt")) == {
        'allows "\\#$a" with freeze - ./spec/device_spec.rb[1:2]': P,
        'allows "\\#@a" with freeze - ./spec/device_spec.rb[1:3]': P,
        "should detect iPhone XS in portrait and landscape - ./spec/device_spec.rb[1:1:1]": P,
        "should detect iPhone 13 in portrait and landscape based on priority - ./spec/device_spec.rb[1:1:2]": F,
    }
    grouped = get_parser("rspec_transformed_json")(fixture("rspec_grouped.txt"))
    assert grouped["should detect iPhone 13 in portrait and landscape based on priority"] is F
    assert "should be skipped" not in grouped


def test_rspec_row_ids() -> None:
    """fastlane__fastlane-20642 and jordansissel__fpm-1829 ids."""
    log = ("should detect iPhone 13 in portrait and landscape based on priority - "
           "./frameit/spec/device_spec.rb[1:1:1:2] - passed\nshould reject 'hello (>)' - failed\n")
    assert get_parser("rspec_transformed_json")(log) == {
        "should detect iPhone 13 in portrait and landscape based on priority - ./frameit/spec/device_spec.rb[1:1:1:2]": P,
        "should reject 'hello (>)'": F,
    }


CUCUMBER = ("features/incremental_rebuild.feature:27  Scenario: Rebuild when content is changed ......\n"
            "features/post_data.feature:6  Scenario: Use post.title variable ..F\n"
            "2 scenarios (1 failed, 1 passed)\n")


def test_cucumber_lines_of_jekylls_formatter() -> None:
    assert get_parser("cucumber")(CUCUMBER) == {
        "features/incremental_rebuild.feature:27  Scenario: Rebuild when content is changed": P,
        "features/post_data.feature:6  Scenario: Use post.title variable": F,
    }


def test_jekyll_picks_the_rows_runner_by_task() -> None:
    minitest = fixture("minitest.txt")

    def task(number: str) -> Task:
        return Task(instance_id=f"jekyll__jekyll-{number}", repo="jekyll/jekyll", base_commit="0" * 40)

    assert get_parser("jekyll", task("8047"))(minitest + CUCUMBER) == get_parser("minitest")(minitest)
    assert get_parser("jekyll", task("8771"))(minitest + CUCUMBER) == get_parser("cucumber")(CUCUMBER)
    # Without a task (the harness's one-argument call), or for another PR, both forms are read.
    both = get_parser("jekyll")(minitest + CUCUMBER)
    assert both == {**get_parser("minitest")(minitest), **get_parser("cucumber")(CUCUMBER)}
    assert get_parser("jekyll", task("1"))(minitest + CUCUMBER) == both
