"""A recipe from the row alone, for a repository no recipe names: the kind its `log_parser`
implies, its own eval_script's build steps and test command. Python rows are not guessed: their
environments need a recipe's pins."""

from __future__ import annotations

from issuebench.models import EnvSpec, Task

# The reference's parser names (without `parse_log_`) -> the environment kind that runs them.
KIND_OF_PARSER: dict[str, str] = {
    **dict.fromkeys(("jest", "vitest", "karma", "tap", "marked", "calypso", "chart_js", "p5js", "react_pdf",
                     "immutable_js", "mocha", "jasmine"), "node"),
    **dict.fromkeys(("redis", "jq", "micropython_test", "googletest", "doctest"), "native"),
    "gotest": "go",
    "cargo": "rust",
    **dict.fromkeys(("maven", "ant", "gradle_custom"), "java"),
    "phpunit": "php",
    **dict.fromkeys(("rspec_transformed_json", "ruby_unit", "jekyll"), "ruby"),
}


def spec_from_row(task: Task) -> EnvSpec | None:
    """The row's own recipe (None when its parser names no kind here, or it has no eval_script)."""
    parser = (task.log_parser or "").removeprefix("parse_log_")
    kind = KIND_OF_PARSER.get(parser)
    if kind is None or not task.eval_script:
        return None
    return EnvSpec(kind=kind, commands_from="row", log_parser=parser,
                   notes=[f"recipe: from the row (no recipe names {task.repo}; its log_parser {parser} runs on "
                          f"the {kind} kind)"])
