"""Build the embedded demo dataset: three small projects, their git bundles, 12 tasks, predictions.

Run from the repository root:

    .venv/bin/python scripts/build_demo.py [--python PATH ...] [--check]

Each project is a real git repository made here from the sources below, with a linear history and
fixed dates, so the commit ids are the same on every run. The bugs live in that history and the
fixes never do: a task's gold patch and test patch are written as edits on the base commit and
turned into diffs by git. FAIL_TO_PASS and PASS_TO_PASS come from running the tests (test patch
only, then test patch + gold) and parsing the output with issuebench's own "unittest" parser.
Every prediction in mixed.jsonl is applied with issuebench's patch engine and graded with its
grading rules, and the status it gets is written to expected_mixed.json, so the expectations are
measured, not hoped for. Extra `--python` interpreters re-run every task and must agree.

`--check` rebuilds into a temporary folder and fails if the result differs from the committed data.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from issuebench.grading import grade
from issuebench.harness.commands import test_command
from issuebench.models import EnvSpec, InstanceStatus, PatchStatus, TestStatus
from issuebench.parsers import get_parser
from issuebench.patch import apply_patch, files_touched, is_test_path

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "src" / "issuebench" / "demo" / "data"
OWNER = "issuebench-demo"

# Nothing is installed: the projects have no dependencies and import from src/ via PYTHONPATH,
# so the environment builds offline. No date cutoff, so every task shares one environment.
DEMO_ENV = EnvSpec(
    python="3.11",
    seed_pip=False,
    packages=[],
    install=[],
    test_cmd="python -m unittest -v",
    test_directives="paths",
    log_parser="unittest",
    env_vars={"PYTHONPATH": "src"},
    exclude_newer_source="none",
    notes=["issuebench demo project: standard library only, tests use unittest"],
)


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def replace_once(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        raise ValueError(f"expected exactly one occurrence of {old!r}")
    return text.replace(old, new)


def block(text: str) -> str:
    """Code that sits one level deep (methods of a class): dedented, then indented once."""
    return textwrap.indent(src(text), "    ")


def methods(text: str) -> str:
    """Test methods to add inside a class, after a blank line."""
    return "\n" + block(text)


@dataclass
class Commit:
    message: str
    date: str  # ISO 8601 with offset; used for author and committer
    files: dict[str, str]  # full contents of the files this commit adds or changes
    tag: str | None = None


@dataclass
class Edit:
    """Replace `old` (which must occur exactly once) by `new` in `path`; old="" appends."""

    path: str
    old: str
    new: str


@dataclass
class Mixed:
    """The demo-mixed prediction for a task and the verdict it is written to get."""

    kind: str  # "edits" | "raw" | "bad_counts" (gold with wrong @@ counts) | "offset" (edits, shifted lines)
    status: InstanceStatus
    why: str
    outcome: str | None = None
    patch_status: PatchStatus | None = None
    edits: list[Edit] = field(default_factory=list)
    raw: str = ""


@dataclass
class TaskDef:
    number: int
    base: int  # index into the project's commits
    version: str
    setup: int  # environment_setup_commit, index into the commits
    created_at: str
    problem_statement: str
    gold: list[Edit]
    tests: list[Edit]
    mixed: Mixed
    hints_text: str = ""


@dataclass
class Project:
    name: str
    author: str
    commits: list[Commit]
    tasks: list[TaskDef]


# --------------------------------------------------------------------------------------------
# Project 1: textkit, everyday text helpers.
# --------------------------------------------------------------------------------------------

TEXTKIT_PYPROJECT = src('''
    [project]
    name = "textkit"
    version = "{version}"
    description = "Small, dependency-free helpers for everyday text wrangling."
    requires-python = ">=3.8"
    ''')

TEXTKIT_README = src('''
    # textkit

    Small, dependency-free helpers for everyday text wrangling.

    ```python
    >>> from textkit import snake_case, wrap, slugify, truncate
    >>> snake_case("userName")
    'user_name'
    >>> slugify("Crème Brûlée!")
    'creme-brulee'
    ```

    Run the tests with `PYTHONPATH=src python -m unittest -v`.
    ''')

TEXTKIT_CASE = src('''
    """Convert identifiers and phrases between naming conventions."""

    import re

    # A word is a run of lower-case letters with an optional leading capital, a lone capital,
    # or a run of digits: "page2Title" -> page, 2, Title.
    _WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]|[0-9]+")

    # Short words that stay lower case inside a title, as most English style guides have it.
    MINOR_WORDS = frozenset("a an and as at but by for in nor of on or the to up via".split())


    def split_words(text):
        """The words of an identifier or a phrase: "userName2" -> ["user", "Name", "2"]."""
        return _WORD.findall(text)


    def snake_case(text):
        """"Hello World" -> "hello_world"."""
        return "_".join(word.lower() for word in split_words(text))


    def kebab_case(text):
        """"someValue" -> "some-value"."""
        return "-".join(word.lower() for word in split_words(text))


    def camel_case(text):
        """"user_id_field" -> "userIdField"."""
        words = [word.lower() for word in split_words(text)]
        if not words:
            return ""
        return words[0] + "".join(word.capitalize() for word in words[1:])


    def pascal_case(text):
        """"make me a class" -> "MakeMeAClass"."""
        return "".join(word.capitalize() for word in split_words(text))


    def title_case(text):
        """Capitalise every word except minor ones, which stay lower case unless first or last."""
        words = text.split()
        titled = []
        for index, word in enumerate(words):
            lower = word.lower()
            if 0 < index < len(words) - 1 and lower in MINOR_WORDS:
                titled.append(lower)
            else:
                titled.append(word[:1].upper() + word[1:])
        return " ".join(titled)
    ''')

TEXTKIT_TEST_CASE = src('''
    import unittest

    from textkit.case import camel_case, kebab_case, pascal_case, snake_case, split_words, title_case


    class SplitWordsTest(unittest.TestCase):
        def test_camel_identifier(self):
            self.assertEqual(split_words("userName"), ["user", "Name"])

        def test_separators_are_dropped(self):
            self.assertEqual(split_words("user-name_value here"), ["user", "name", "value", "here"])

        def test_digits_are_words(self):
            self.assertEqual(split_words("page2Title"), ["page", "2", "Title"])


    class ConversionTest(unittest.TestCase):
        def test_snake_case(self):
            self.assertEqual(snake_case("Hello World"), "hello_world")

        def test_kebab_case(self):
            self.assertEqual(kebab_case("someValue"), "some-value")

        def test_camel_case(self):
            self.assertEqual(camel_case("user_id_field"), "userIdField")

        def test_pascal_case(self):
            self.assertEqual(pascal_case("make me a class"), "MakeMeAClass")

        def test_empty_string(self):
            self.assertEqual(camel_case(""), "")
            self.assertEqual(snake_case(""), "")


    class TitleCaseTest(unittest.TestCase):
        def test_minor_words_stay_lower(self):
            self.assertEqual(title_case("the lord of the rings"), "The Lord of the Rings")

        def test_last_word_is_capitalised(self):
            self.assertEqual(title_case("what are you made of"), "What Are You Made Of")
    ''')

TEXTKIT_WRAP = src('''
    """Greedy word wrapping."""


    def wrap(text, width=70):
        """Split `text` into lines of at most `width` characters, breaking between words.

        Runs of whitespace count as one space. Words longer than `width` are cut into pieces of
        `width` characters.
        """
        if width < 1:
            raise ValueError("width must be at least 1, got %r" % (width,))
        lines = []
        current = ""
        for word in text.split():
            while len(word) > width:
                if current:
                    lines.append(current)
                    current = ""
                lines.append(word[:width])
                word = word[width:]
            if not current:
                current = word
            elif len(current) + 1 + len(word) < width:
                current = current + " " + word
            else:
                lines.append(current)
                current = word
        if current:
            lines.append(current)
        return lines


    def fill(text, width=70, indent=""):
        """Wrap `text` into one string; every line starts with `indent` and fits in `width`."""
        return "\\n".join(indent + line for line in wrap(text, width - len(indent)))
    ''')

TEXTKIT_TEST_WRAP = src('''
    import unittest

    from textkit.wrap import fill, wrap


    class WrapTest(unittest.TestCase):
        def test_short_text_is_one_line(self):
            self.assertEqual(wrap("hello world", 70), ["hello world"])

        def test_breaks_between_words(self):
            self.assertEqual(wrap("the quick brown fox", 10), ["the quick", "brown fox"])

        def test_long_word_is_cut(self):
            self.assertEqual(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"])

        def test_whitespace_is_collapsed(self):
            self.assertEqual(wrap("  a \\n b\\t c  ", 70), ["a b c"])

        def test_empty_text(self):
            self.assertEqual(wrap("", 10), [])

        def test_width_must_be_positive(self):
            with self.assertRaises(ValueError):
                wrap("text", 0)


    class FillTest(unittest.TestCase):
        def test_fill_indents_every_line(self):
            self.assertEqual(fill("one two three", width=12, indent="  "), "  one two\\n  three")
    ''')

TEXTKIT_SLUG = src('''
    """URL slugs from arbitrary text."""

    import re
    import unicodedata

    _NOT_ALLOWED = re.compile(r"[^a-z0-9]+")


    def slugify(text, sep="-", max_length=None):
        """Lower-case ASCII slug of `text`: "Crème Brûlée!" -> "creme-brulee".

        With `max_length`, the slug is shortened to at most that many characters.
        """
        ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
        slug = _NOT_ALLOWED.sub(sep, ascii_text.lower()).strip(sep)
        if max_length is not None and len(slug) > max_length:
            slug = slug[:max_length]
        return slug
    ''')

TEXTKIT_TEST_SLUG = src('''
    import unittest

    from textkit.slug import slugify


    class SlugifyTest(unittest.TestCase):
        def test_punctuation_becomes_separator(self):
            self.assertEqual(slugify("Hello, World!"), "hello-world")

        def test_accents_are_removed(self):
            self.assertEqual(slugify("Crème Brûlée"), "creme-brulee")

        def test_custom_separator(self):
            self.assertEqual(slugify("a b c", sep="_"), "a_b_c")

        def test_no_leading_or_trailing_separator(self):
            self.assertEqual(slugify("  --Hello--  "), "hello")

        def test_max_length_long_single_word(self):
            self.assertEqual(slugify("abcdefghij", max_length=4), "abcd")

        def test_max_length_not_reached(self):
            self.assertEqual(slugify("short title", max_length=50), "short-title")
    ''')

TEXTKIT_TRUNCATE = src('''
    """Shorten text for previews and table cells."""


    def truncate(text, length, ellipsis="…"):
        """Shorten `text` to at most `length` characters, ending with `ellipsis` when shortened.

        The cut falls between words when there is a space to cut at.
        """
        if len(text) <= length:
            return text
        if length <= len(ellipsis):
            return ellipsis[:length]
        room = length
        cut = text[:room]
        if not text[room].isspace():
            space = cut.rfind(" ")
            if space > 0:
                cut = cut[:space]
        return cut.rstrip() + ellipsis
    ''')

TEXTKIT_TEST_TRUNCATE = src('''
    import unittest

    from textkit.truncate import truncate


    class TruncateTest(unittest.TestCase):
        def test_short_text_is_unchanged(self):
            self.assertEqual(truncate("hello", 10), "hello")

        def test_cut_between_words(self):
            self.assertEqual(truncate("The quick brown fox", 10), "The quick…")

        def test_tiny_length_gives_only_the_ellipsis(self):
            self.assertEqual(truncate("hello", 1), "…")
    ''')


WRAP_ANCHOR = '        with self.assertRaises(ValueError):\n            wrap("text", 0)\n'


def textkit_init(version: str, modules: list[str]) -> str:
    imports = {
        "case": "from textkit.case import camel_case, kebab_case, pascal_case, snake_case, split_words, title_case",
        "slug": "from textkit.slug import slugify",
        "truncate": "from textkit.truncate import truncate",
        "wrap": "from textkit.wrap import fill, wrap",
    }
    lines = [imports[m] for m in sorted(modules)]
    return ('"""textkit: small, dependency-free helpers for everyday text wrangling."""\n\n'
            + "\n".join(lines) + f'\n\n__version__ = "{version}"\n')


TEXTKIT = Project(
    name="textkit",
    author="Mira Okafor <mira.okafor@example.org>",
    commits=[
        Commit("Initial commit: naming-convention helpers", "2023-03-04T10:12:31+01:00", {
            "README.md": TEXTKIT_README,
            "pyproject.toml": TEXTKIT_PYPROJECT.format(version="0.9.0"),
            "src/textkit/__init__.py": textkit_init("0.9.0", ["case"]),
            "src/textkit/case.py": TEXTKIT_CASE,
            "tests/__init__.py": "",
            "tests/test_case.py": TEXTKIT_TEST_CASE,
        }),
        Commit("Add wrap() and fill()", "2023-03-19T18:40:02+01:00", {
            "src/textkit/__init__.py": textkit_init("0.9.0", ["case", "wrap"]),
            "src/textkit/wrap.py": TEXTKIT_WRAP,
            "tests/test_wrap.py": TEXTKIT_TEST_WRAP,
        }),
        Commit("Add slugify(); release 1.0.0", "2023-04-02T09:05:47+02:00", {
            "pyproject.toml": TEXTKIT_PYPROJECT.format(version="1.0.0"),
            "src/textkit/__init__.py": textkit_init("1.0.0", ["case", "wrap", "slug"]),
            "src/textkit/slug.py": TEXTKIT_SLUG,
            "tests/test_slug.py": TEXTKIT_TEST_SLUG,
        }, tag="v1.0.0"),
        Commit("Add truncate(); release 1.1.0", "2023-05-10T21:30:15+02:00", {
            "pyproject.toml": TEXTKIT_PYPROJECT.format(version="1.1.0"),
            "src/textkit/__init__.py": textkit_init("1.1.0", ["case", "wrap", "slug", "truncate"]),
            "src/textkit/truncate.py": TEXTKIT_TRUNCATE,
            "tests/test_truncate.py": TEXTKIT_TEST_TRUNCATE,
        }, tag="v1.1.0"),
    ],
    tasks=[
        TaskDef(
            number=1, base=1, version="1.0", setup=2, created_at="2023-03-27T14:02:11Z",
            problem_statement=src('''
                snake_case() splits acronyms into single letters

                Converting class names that contain an acronym gives one word per capital letter:

                ```python
                >>> from textkit import snake_case, kebab_case
                >>> snake_case("HTTPServerError")
                'h_t_t_p_server_error'
                >>> kebab_case("userID")
                'user-i-d'
                ```

                I expected `'http_server_error'` and `'user-id'`. An acronym should stay one word,
                and the capital that starts the next word (`S` in `HTTPServer`) belongs to that word.
                The other converters (`camel_case`, `pascal_case`) have the same problem, since they
                all go through `split_words`.

                textkit 0.9.0, Python 3.11.
                '''),
            hints_text="split_words() is where the words are found; the regular expression has no rule for runs of capitals.",
            gold=[Edit("src/textkit/case.py",
                       '# A word is a run of lower-case letters with an optional leading capital, a lone capital,\n'
                       '# or a run of digits: "page2Title" -> page, 2, Title.\n'
                       '_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]|[0-9]+")\n',
                       '# A word is an acronym (capitals not followed by a lower-case letter: "HTTP" in\n'
                       '# "HTTPServer"), a run of lower-case letters with an optional leading capital, or a\n'
                       '# run of digits: "page2Title" -> page, 2, Title.\n'
                       '_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")\n')],
            tests=[Edit("tests/test_case.py", "", "\n\n" + src('''
                class AcronymTest(unittest.TestCase):
                    def test_leading_acronym(self):
                        self.assertEqual(snake_case("HTTPServerError"), "http_server_error")

                    def test_acronym_in_the_middle(self):
                        self.assertEqual(split_words("parseJSONResponse"), ["parse", "JSON", "Response"])

                    def test_trailing_acronym(self):
                        self.assertEqual(kebab_case("userID"), "user-id")

                    def test_single_capital_is_still_a_word(self):
                        self.assertEqual(split_words("getX"), ["get", "X"])
                '''))],
            mixed=Mixed(
                "edits", InstanceStatus.RESOLVED, "a different regular expression that also fixes it",
                outcome="Resolved", patch_status=PatchStatus.APPLIED,
                edits=[Edit("src/textkit/case.py",
                            '_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]|[0-9]+")\n',
                            '# Acronyms end where the next capitalised word starts: "HTTPServer" -> HTTP, Server.\n'
                            '_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?=[A-Z][a-z]|[^A-Za-z]|$)|[0-9]+")\n')]),
        ),
        TaskDef(
            number=2, base=2, version="1.0", setup=2, created_at="2023-04-11T08:45:30Z",
            problem_statement=src('''
                wrap() breaks lines one character too early

                `wrap()` never produces a line that is exactly `width` characters long, even when the
                words fit:

                ```python
                >>> from textkit import wrap, fill
                >>> wrap("aaa bbb ccc", 7)
                ['aaa', 'bbb', 'ccc']
                >>> print(fill("aaa bbb ccc", width=9, indent="  "))
                  aaa
                  bbb
                  ccc
                ```

                "aaa bbb" is 7 characters, so the first line should be `'aaa bbb'`. The docstring
                says "lines of at most `width` characters". This makes our generated emails wrap at
                71 columns instead of 72.
                '''),
            gold=[Edit("src/textkit/wrap.py",
                       "        elif len(current) + 1 + len(word) < width:\n",
                       "        elif len(current) + 1 + len(word) <= width:\n")],
            tests=[
                Edit("tests/test_wrap.py", WRAP_ANCHOR, WRAP_ANCHOR + methods('''
                    def test_line_may_fill_the_whole_width(self):
                        self.assertEqual(wrap("aaa bbb ccc", 7), ["aaa bbb", "ccc"])

                    def test_each_line_is_as_long_as_possible(self):
                        text = "lorem ipsum dolor sit amet consectetur"
                        self.assertEqual(wrap(text, 11), ["lorem ipsum", "dolor sit", "amet", "consectetur"])
                    ''')),
                Edit("tests/test_wrap.py", "", methods('''
                    def test_fill_uses_the_full_width(self):
                        self.assertEqual(fill("aaa bbb ccc", width=9, indent="  "), "  aaa bbb\\n  ccc")
                    ''')),
            ],
            mixed=Mixed(
                "edits", InstanceStatus.UNRESOLVED,
                "rewrites the comparison without changing it: no test changes (No-Op)",
                outcome="No-Op", patch_status=PatchStatus.APPLIED,
                edits=[Edit("src/textkit/wrap.py",
                            "        elif len(current) + 1 + len(word) < width:\n",
                            "        # leave room for the space that joins the word to the line\n"
                            "        elif len(current) + len(word) + 1 < width:\n")]),
        ),
        TaskDef(
            number=3, base=3, version="1.1", setup=3, created_at="2023-05-22T16:20:05Z",
            problem_statement=src('''
                slugify(max_length=...) leaves half words and trailing dashes

                With `max_length` the slug is simply cut, which gives ugly URLs:

                ```python
                >>> from textkit import slugify
                >>> slugify("Hello World", max_length=6)
                'hello-'
                >>> slugify("Hello World Again", max_length=14)
                'hello-world-ag'
                ```

                Expected `'hello'` and `'hello-world'`: the slug should be cut at the last separator
                that fits, and never end with a separator. When the first word alone is longer
                than `max_length` a hard cut is fine (that is what happens today).
                '''),
            gold=[Edit("src/textkit/slug.py",
                       "        slug = slug[:max_length]\n",
                       "        cut = slug[:max_length]\n"
                       "        # Cut at the last separator unless the cut already falls on a word boundary,\n"
                       "        # so a slug never ends in half a word or in a separator.\n"
                       "        if not slug[max_length:].startswith(sep) and sep in cut:\n"
                       "            cut = cut.rsplit(sep, 1)[0]\n"
                       "        slug = cut.rstrip(sep)\n")],
            tests=[Edit("tests/test_slug.py", "", methods('''

                    def test_max_length_never_ends_with_a_separator(self):
                        self.assertEqual(slugify("Hello World", max_length=6), "hello")

                    def test_max_length_cuts_at_a_word_boundary(self):
                        self.assertEqual(slugify("Hello World Again", max_length=14), "hello-world")

                    def test_max_length_on_a_boundary_keeps_the_word(self):
                        self.assertEqual(slugify("hello world", max_length=5), "hello")
                '''))],
            mixed=Mixed(
                "edits", InstanceStatus.UNRESOLVED,
                "strips the trailing separator but still cuts words in half (Partially Resolved)",
                outcome="Partially Resolved", patch_status=PatchStatus.APPLIED,
                edits=[Edit("src/textkit/slug.py",
                            "        slug = slug[:max_length]\n",
                            "        slug = slug[:max_length].rstrip(sep)\n")]),
        ),
        TaskDef(
            number=4, base=3, version="1.1", setup=3, created_at="2023-06-03T11:11:43Z",
            problem_statement=src('''
                truncate() returns strings longer than the length asked for

                `truncate(text, length)` is documented to return at most `length` characters, but the
                ellipsis is added after cutting to `length`, so the result can be longer:

                ```python
                >>> from textkit import truncate
                >>> truncate("abcdefghij", 5)
                'abcde…'
                >>> truncate("hello big world", 9, ellipsis="...")
                'hello big...'
                ```

                Both are longer than asked (6 and 12 characters). This breaks our fixed-width table
                output. textkit 1.1.0.
                '''),
            gold=[Edit("src/textkit/truncate.py",
                       "    room = length\n",
                       "    room = length - len(ellipsis)\n")],
            tests=[Edit("tests/test_truncate.py", "", methods('''

                    def test_result_never_exceeds_length(self):
                        text = "The quick brown fox jumps over the lazy dog"
                        for length in range(1, len(text) + 1):
                            self.assertLessEqual(len(truncate(text, length)), length, length)

                    def test_custom_ellipsis_counts_towards_the_length(self):
                        self.assertEqual(truncate("hello big world", 9, ellipsis="..."), "hello...")

                    def test_single_long_word_is_cut_hard(self):
                        self.assertEqual(truncate("abcdefghij", 5), "abcd…")
                '''))],
            mixed=Mixed(
                "bad_counts", InstanceStatus.RESOLVED,
                "the gold fix with wrong @@ line counts: applies only after the counts are repaired",
                outcome="Resolved", patch_status=PatchStatus.APPLIED_AFTER_REPAIR),
        ),
    ],
)


# --------------------------------------------------------------------------------------------
# Project 2: tinycalc, a safe arithmetic expression evaluator.
# --------------------------------------------------------------------------------------------

TINYCALC_PYPROJECT = src('''
    [project]
    name = "tinycalc"
    version = "{version}"
    description = "A small, safe calculator for arithmetic expressions."
    requires-python = ">=3.8"
    ''')

TINYCALC_README = src('''
    # tinycalc

    A small, safe calculator for arithmetic expressions: no `eval()`, just a tokenizer, a
    recursive-descent parser and an evaluator.

    ```python
    >>> from tinycalc import evaluate
    >>> evaluate("2 * (3 + 4)")
    14
    >>> evaluate("x ** 2 + 1", {"x": 3})
    10
    ```

    Run the tests with `PYTHONPATH=src python -m unittest -v`.
    ''')

TINYCALC_README_GRAMMAR = TINYCALC_README + src('''

    ## Syntax

    Numbers, names, `+ - * / %`, `**` (right-associative), unary `-` and `+`, parentheses and
    function calls `name(a, b)`. Precedence and associativity are Python's: `2 ** 3 ** 2` is 512,
    `-2 ** 2` is -4 and `10 - 4 - 3` is 3.

    Functions: `abs`, `max`, `min`, `round`, `sqrt`. Constants: `e`, `pi`, `tau`; a variable of
    the same name wins over a constant.
    ''')

TINYCALC_TOKENS = src('''
    """Turn an expression string into tokens."""

    import re


    class CalcError(Exception):
        """A problem with an expression; `position` is the offset of the offending character."""

        def __init__(self, message, position=None):
            super().__init__(message)
            self.position = position


    class Token:
        __slots__ = ("kind", "text", "position")

        def __init__(self, kind, text, position):
            self.kind = kind  # "number", "name", "op" or "end"
            self.text = text
            self.position = position

        def __repr__(self):
            return "Token(%r, %r, %d)" % (self.kind, self.text, self.position)


    NUMBER = re.compile(r"\\d+(?:\\.\\d+)?")
    NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
    # Longest operators first, so "**" is never read as two "*".
    OPERATORS = ("**", "+", "-", "*", "/", "%", "(", ")", ",")


    def tokenize(source):
        """The tokens of `source`, ending with an "end" token."""
        tokens = []
        position = 0
        while position < len(source):
            char = source[position]
            if char.isspace():
                position += 1
                continue
            match = NUMBER.match(source, position) or NAME.match(source, position)
            if match:
                kind = "number" if match.re is NUMBER else "name"
                tokens.append(Token(kind, match.group(), position))
                position = match.end()
                continue
            for operator in OPERATORS:
                if source.startswith(operator, position):
                    tokens.append(Token("op", operator, position))
                    position += len(operator)
                    break
            else:
                raise CalcError("unexpected character %r" % char, position)
        tokens.append(Token("end", "", len(source)))
        return tokens
    ''')

TINYCALC_PARSER = src('''
    """Recursive-descent parser producing a small tuple-based syntax tree.

    Grammar, lowest precedence first:

        expression := term (("+" | "-") term)*
        term       := power (("*" | "/" | "%") power)*
        power      := factor ("**" power)?
        factor     := ("-" | "+") factor | atom
        atom       := NUMBER | NAME | NAME "(" arguments ")" | "(" expression ")"

    Nodes: ("number", value), ("name", name, position), ("negate", operand),
    ("binary", operator, left, right, position), ("call", name, arguments, position).
    """

    from tinycalc.tokens import CalcError, tokenize


    def describe(token):
        return "end of input" if token.kind == "end" else repr(token.text)


    class Parser:
        def __init__(self, source):
            self.tokens = tokenize(source)
            self.index = 0

        @property
        def current(self):
            return self.tokens[self.index]

        def accept(self, *operators):
            """Consume and return the current token if it is one of `operators`."""
            token = self.current
            if token.kind == "op" and token.text in operators:
                self.index += 1
                return token
            return None

        def expect(self, operator):
            token = self.accept(operator)
            if token is None:
                raise CalcError("expected %r, found %s" % (operator, describe(self.current)),
                                self.current.position)
            return token

        def parse(self):
            tree = self.expression()
            if self.current.kind != "end":
                raise CalcError("unexpected %s" % describe(self.current), self.current.position)
            return tree

        def expression(self):
            left = self.term()
            operator = self.accept("+", "-")
            if operator:
                return ("binary", operator.text, left, self.expression(), operator.position)
            return left

        def term(self):
            left = self.power()
            operator = self.accept("*", "/", "%")
            if operator:
                return ("binary", operator.text, left, self.term(), operator.position)
            return left

        def power(self):
            base = self.factor()
            operator = self.accept("**")
            if operator:
                return ("binary", "**", base, self.power(), operator.position)
            return base

        def factor(self):
            operator = self.accept("-", "+")
            if operator:
                operand = self.factor()
                return ("negate", operand) if operator.text == "-" else operand
            return self.atom()

        def atom(self):
            token = self.current
            if token.kind == "number":
                self.index += 1
                return ("number", float(token.text) if "." in token.text else int(token.text))
            if token.kind == "name":
                self.index += 1
                if self.accept("("):
                    arguments = []
                    if not self.accept(")"):
                        arguments.append(self.expression())
                        while self.accept(","):
                            arguments.append(self.expression())
                        self.expect(")")
                    return ("call", token.text, arguments, token.position)
                return ("name", token.text, token.position)
            if self.accept("("):
                tree = self.expression()
                self.expect(")")
                return tree
            raise CalcError("unexpected %s" % describe(token), token.position)


    def parse(source):
        """The syntax tree of `source`; raises CalcError on a syntax error."""
        return Parser(source).parse()
    ''')

TINYCALC_EVALUATE_V1 = src('''
    """Evaluate expressions with variables and a few functions."""

    import operator

    from tinycalc.parser import parse
    from tinycalc.tokens import CalcError

    FUNCTIONS = {"abs": abs, "max": max, "min": min}
    BINARY = {
        "+": operator.add,
        "-": operator.sub,
        "*": operator.mul,
        "/": operator.truediv,
        "%": operator.mod,
        "**": operator.pow,
    }


    def evaluate(source, variables=None):
        """The value of the expression `source`, with names looked up in `variables`."""
        return _evaluate(parse(source), dict(variables or {}))


    def _evaluate(node, names):
        kind = node[0]
        if kind == "number":
            return node[1]
        if kind == "name":
            return names[node[1]]
        if kind == "negate":
            return -_evaluate(node[1], names)
        if kind == "call":
            _, name, arguments, position = node
            function = FUNCTIONS.get(name)
            if function is None:
                raise CalcError("unknown function %r" % name, position)
            return function(*[_evaluate(argument, names) for argument in arguments])
        _, symbol, left, right, position = node
        left_value = _evaluate(left, names)
        right_value = _evaluate(right, names)
        if symbol in ("/", "%") and right_value == 0:
            raise CalcError("division by zero", position)
        return BINARY[symbol](left_value, right_value)
    ''')

TINYCALC_EVALUATE_V2 = TINYCALC_EVALUATE_V1
for _old, _new in (
    ('import operator\n', 'import math\nimport operator\n'),
    ('FUNCTIONS = {"abs": abs, "max": max, "min": min}\n',
             'FUNCTIONS = {"abs": abs, "max": max, "min": min, "round": round, "sqrt": math.sqrt}\n'
             'CONSTANTS = {"e": math.e, "pi": math.pi, "tau": math.tau}\n'),
    ('    """The value of the expression `source`, with names looked up in `variables`."""\n'
             '    return _evaluate(parse(source), dict(variables or {}))\n',
             '    """The value of the expression `source`; names are looked up in `variables`, then in\n'
             '    CONSTANTS."""\n'
             '    names = dict(CONSTANTS)\n'
             '    names.update(variables or {})\n'
             '    return _evaluate(parse(source), names)\n'),
):
    TINYCALC_EVALUATE_V2 = replace_once(TINYCALC_EVALUATE_V2, _old, _new)

TINYCALC_TEST_TOKENS = src('''
    import unittest

    from tinycalc.tokens import CalcError, tokenize


    class TokenizeTest(unittest.TestCase):
        def kinds(self, source):
            return [(token.kind, token.text) for token in tokenize(source)]

        def test_numbers_names_and_operators(self):
            self.assertEqual(self.kinds("x1 + 2.5"),
                             [("name", "x1"), ("op", "+"), ("number", "2.5"), ("end", "")])

        def test_double_star_is_one_operator(self):
            self.assertEqual(self.kinds("2**3")[1], ("op", "**"))

        def test_positions(self):
            self.assertEqual([token.position for token in tokenize(" a +b")], [1, 3, 4, 5])

        def test_unexpected_character(self):
            with self.assertRaises(CalcError) as caught:
                tokenize("1 $ 2")
            self.assertEqual(caught.exception.position, 2)
    ''')

TINYCALC_TEST_EVALUATE_V1 = src('''
    import unittest

    from tinycalc import CalcError, evaluate


    class ArithmeticTest(unittest.TestCase):
        def test_precedence(self):
            self.assertEqual(evaluate("1 + 2 * 3"), 7)

        def test_parentheses(self):
            self.assertEqual(evaluate("(1 + 2) * 3"), 9)

        def test_true_division(self):
            self.assertEqual(evaluate("7 / 2"), 3.5)

        def test_power_is_right_associative(self):
            self.assertEqual(evaluate("2 ** 3 ** 2"), 512)

        def test_negative_exponent(self):
            self.assertEqual(evaluate("2 ** -1"), 0.5)

        def test_unary_minus(self):
            self.assertEqual(evaluate("-3 + 5"), 2)
            self.assertEqual(evaluate("--3"), 3)

        def test_division_by_zero(self):
            with self.assertRaises(CalcError) as caught:
                evaluate("1 / (2 - 2)")
            self.assertEqual(caught.exception.position, 2)


    class NamesTest(unittest.TestCase):
        def test_variables(self):
            self.assertEqual(evaluate("x * y", {"x": 3, "y": 4}), 12)

        def test_function_call(self):
            self.assertEqual(evaluate("max(1, 5, 3)"), 5)

        def test_unknown_function(self):
            with self.assertRaises(CalcError):
                evaluate("nope(1)")


    class SyntaxErrorTest(unittest.TestCase):
        def test_trailing_operator(self):
            with self.assertRaises(CalcError):
                evaluate("1 +")

        def test_unbalanced_parenthesis(self):
            with self.assertRaises(CalcError) as caught:
                evaluate("(1 + 2")
            self.assertIn("')'", str(caught.exception))
    ''')

TINYCALC_TEST_EVALUATE_V2 = replace_once(
    TINYCALC_TEST_EVALUATE_V1,
    '        self.assertEqual(evaluate("max(1, 5, 3)"), 5)\n',
    '        self.assertEqual(evaluate("max(1, 5, 3)"), 5)\n'
    '        self.assertEqual(evaluate("sqrt(16)"), 4)\n'
    '\n'
    '    def test_constants(self):\n'
    '        self.assertAlmostEqual(evaluate("2 * pi"), evaluate("tau"))\n')


def tinycalc_init(version: str, with_evaluate: bool = True) -> str:
    return ('"""tinycalc: a small, safe calculator for arithmetic expressions."""\n\n'
            + ("from tinycalc.evaluate import evaluate\n" if with_evaluate else "")
            + "from tinycalc.parser import parse\n"
            "from tinycalc.tokens import CalcError, tokenize\n\n"
            f'__version__ = "{version}"\n')


TINYCALC_CHANGELOG = src('''
    # Changelog

    ## 0.2.0

    - Functions `round` and `sqrt`; constants `e`, `pi` and `tau`.
    - The grammar is documented in the README.

    ## 0.1.0

    - First release: numbers, variables, `+ - * / % **`, unary minus, `abs`, `max`, `min`.
    ''')

ARITH_ANCHOR = '        self.assertEqual(evaluate("7 / 2"), 3.5)\n'
NAMES_ANCHOR = '        self.assertAlmostEqual(evaluate("2 * pi"), evaluate("tau"))\n'

TINYCALC = Project(
    name="tinycalc",
    author="Tomás Ferreira <tomas.ferreira@example.org>",
    commits=[
        Commit("tinycalc: tokenizer, parser and evaluator", "2023-06-01T19:22:40-03:00", {
            "README.md": TINYCALC_README,
            "pyproject.toml": TINYCALC_PYPROJECT.format(version="0.1.0"),
            "src/tinycalc/__init__.py": tinycalc_init("0.1.0"),
            "src/tinycalc/tokens.py": TINYCALC_TOKENS,
            "src/tinycalc/parser.py": TINYCALC_PARSER,
            "src/tinycalc/evaluate.py": TINYCALC_EVALUATE_V1,
            "tests/__init__.py": "",
            "tests/test_tokens.py": TINYCALC_TEST_TOKENS,
            "tests/test_evaluate.py": TINYCALC_TEST_EVALUATE_V1,
        }, tag="v0.1.0"),
        Commit("Add round() and sqrt(), and the constants e, pi and tau", "2023-06-15T22:03:11-03:00", {
            "src/tinycalc/evaluate.py": TINYCALC_EVALUATE_V2,
            "tests/test_evaluate.py": TINYCALC_TEST_EVALUATE_V2,
        }),
        Commit("Document the syntax in the README", "2023-07-02T10:48:56-03:00", {
            "README.md": TINYCALC_README_GRAMMAR,
        }),
        Commit("Release 0.2.0", "2023-08-20T15:31:08-03:00", {
            "CHANGELOG.md": TINYCALC_CHANGELOG,
            "pyproject.toml": TINYCALC_PYPROJECT.format(version="0.2.0"),
            "src/tinycalc/__init__.py": tinycalc_init("0.2.0"),
        }, tag="v0.2.0"),
    ],
    tasks=[
        TaskDef(
            number=1, base=1, version="0.1", setup=2, created_at="2023-06-20T09:14:27Z",
            problem_statement=src('''
                Subtraction and division chains give wrong results

                ```python
                >>> from tinycalc import evaluate
                >>> evaluate("10 - 4 - 3")
                9
                >>> evaluate("8 / 4 / 2")
                4.0
                ```

                Python (and every calculator I know) gives 3 and 1.0: these operators are
                left-associative, `10 - 4 - 3` means `(10 - 4) - 3`. It looks like the parser
                groups them from the right. Same for `1 - 2 + 3` (gives -4 instead of 2).
                '''),
            hints_text="The grammar in parser.py's docstring says `term ((\"+\" | \"-\") term)*`, but expression() recurses into itself.",
            gold=[Edit("src/tinycalc/parser.py",
                       block('''
                           def expression(self):
                               left = self.term()
                               operator = self.accept("+", "-")
                               if operator:
                                   return ("binary", operator.text, left, self.expression(), operator.position)
                               return left

                           def term(self):
                               left = self.power()
                               operator = self.accept("*", "/", "%")
                               if operator:
                                   return ("binary", operator.text, left, self.term(), operator.position)
                               return left
                       '''),
                       block('''
                           def expression(self):
                               # A loop, not recursion: "+" and "-" group from the left.
                               tree = self.term()
                               while True:
                                   operator = self.accept("+", "-")
                                   if operator is None:
                                       return tree
                                   tree = ("binary", operator.text, tree, self.term(), operator.position)

                           def term(self):
                               tree = self.power()
                               while True:
                                   operator = self.accept("*", "/", "%")
                                   if operator is None:
                                       return tree
                                   tree = ("binary", operator.text, tree, self.power(), operator.position)
                       '''))],
            tests=[Edit("tests/test_evaluate.py", ARITH_ANCHOR, ARITH_ANCHOR + methods('''
                def test_subtraction_is_left_associative(self):
                    self.assertEqual(evaluate("10 - 4 - 3"), 3)

                def test_division_is_left_associative(self):
                    self.assertEqual(evaluate("8 / 4 / 2"), 1)

                def test_mixed_sum_chain(self):
                    self.assertEqual(evaluate("1 - 2 + 3"), 2)
                '''))],
            mixed=Mixed(
                "edits", InstanceStatus.RESOLVED, "a different fix (one helper for every left-associative level)",
                outcome="Resolved", patch_status=PatchStatus.APPLIED,
                edits=[Edit("src/tinycalc/parser.py",
                            '''    def expression(self):
        left = self.term()
        operator = self.accept("+", "-")
        if operator:
            return ("binary", operator.text, left, self.expression(), operator.position)
        return left

    def term(self):
        left = self.power()
        operator = self.accept("*", "/", "%")
        if operator:
            return ("binary", operator.text, left, self.term(), operator.position)
        return left
''',
                            '''    def left_associative(self, operand, *operators):
        tree = operand()
        operator = self.accept(*operators)
        while operator:
            tree = ("binary", operator.text, tree, operand(), operator.position)
            operator = self.accept(*operators)
        return tree

    def expression(self):
        return self.left_associative(self.term, "+", "-")

    def term(self):
        return self.left_associative(self.power, "*", "/", "%")
''')]),
        ),
        TaskDef(
            number=2, base=2, version="0.1", setup=2, created_at="2023-07-09T17:55:02Z",
            problem_statement=src('''
                -2 ** 2 evaluates to 4, README says -4

                The README (and Python) say unary minus binds more loosely than `**`:

                ```python
                >>> -2 ** 2
                -4
                >>> from tinycalc import evaluate
                >>> evaluate("-2 ** 2")
                4
                >>> evaluate("-x ** 2", {"x": 3})
                9
                ```

                We use tinycalc for user-entered formulas and `-x ** 2` silently has the wrong
                sign. `(-2) ** 2` should of course stay 4, and `2 ** -1` should stay 0.5.
                '''),
            gold=[Edit("src/tinycalc/parser.py", old, new) for old, new in (
                ('    term       := power (("*" | "/" | "%") power)*\n'
                 '    power      := factor ("**" power)?\n'
                 '    factor     := ("-" | "+") factor | atom\n',
                 '    term       := factor (("*" | "/" | "%") factor)*\n'
                 '    factor     := ("-" | "+") factor | power\n'
                 '    power      := atom ("**" factor)?\n'),
                ('        left = self.power()\n', '        left = self.factor()\n'),
                ('''    def power(self):
        base = self.factor()
        operator = self.accept("**")
        if operator:
            return ("binary", "**", base, self.power(), operator.position)
        return base

    def factor(self):
        operator = self.accept("-", "+")
        if operator:
            operand = self.factor()
            return ("negate", operand) if operator.text == "-" else operand
        return self.atom()
''', '''    def factor(self):
        # Unary minus binds more loosely than "**", as in Python: -2 ** 2 == -(2 ** 2).
        operator = self.accept("-", "+")
        if operator:
            operand = self.factor()
            return ("negate", operand) if operator.text == "-" else operand
        return self.power()

    def power(self):
        base = self.atom()
        operator = self.accept("**")
        if operator:
            # The exponent may carry its own sign (2 ** -1) and groups from the right.
            return ("binary", "**", base, self.factor(), operator.position)
        return base
'''))],
            tests=[Edit("tests/test_evaluate.py", ARITH_ANCHOR, ARITH_ANCHOR + methods('''
                def test_unary_minus_binds_more_loosely_than_power(self):
                    self.assertEqual(evaluate("-2 ** 2"), -4)
                    self.assertEqual(evaluate("-x ** 2", {"x": 3}), -9)

                def test_parenthesised_negative_base(self):
                    self.assertEqual(evaluate("(-2) ** 2"), 4)
                '''))],
            mixed=Mixed(
                "edits", InstanceStatus.UNRESOLVED,
                "fixes -2 ** 2 but no longer parses 2 ** -1, 2 ** 3 ** 2 or --3 (Breaking Resolved)",
                outcome="Breaking Resolved", patch_status=PatchStatus.APPLIED,
                edits=[Edit("src/tinycalc/parser.py",
                            '''    def power(self):
        base = self.factor()
        operator = self.accept("**")
        if operator:
            return ("binary", "**", base, self.power(), operator.position)
        return base
''',
                            '''    def power(self):
        negative = self.accept("-")
        base = self.atom()
        operator = self.accept("**")
        if operator:
            base = ("binary", "**", base, self.atom(), operator.position)
        return ("negate", base) if negative else base
''')]),
        ),
        TaskDef(
            number=3, base=3, version="0.2", setup=3, created_at="2023-08-28T12:40:19Z",
            problem_statement=src('''
                Numbers like .5 and 1e3 are rejected

                ```python
                >>> from tinycalc import evaluate
                >>> evaluate(".5 + 1")
                tinycalc.tokens.CalcError: unexpected character '.'
                >>> evaluate("1e3")
                tinycalc.tokens.CalcError: unexpected 'e3'
                ```

                Both are valid Python number literals and users paste them from spreadsheets.
                I would expect the same forms as Python floats: `.5`, `5.`, `1e3`, `2.5E-4`, `6e+2`.
                '''),
            gold=[
                Edit("src/tinycalc/tokens.py",
                     'NUMBER = re.compile(r"\\d+(?:\\.\\d+)?")\n',
                     '# The forms of Python\'s float literals: 12, 3.25, .5, 5., 1e3, 2.5E-4.\n'
                     'NUMBER = re.compile(r"(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?")\n'),
                Edit("src/tinycalc/parser.py",
                     '            return ("number", float(token.text) if "." in token.text else int(token.text))\n',
                     '            text = token.text\n'
                     '            return ("number", int(text) if text.isdigit() else float(text))\n'),
            ],
            tests=[
                Edit("tests/test_tokens.py", "", methods('''
                    def test_number_forms(self):
                        for text in ("0", "12", "3.25", ".5", "5.", "1e3", "2.5E-4", "6e+2"):
                            self.assertEqual(self.kinds(text), [("number", text), ("end", "")], text)
                    ''')),
                Edit("tests/test_evaluate.py", ARITH_ANCHOR, ARITH_ANCHOR + methods('''
                    def test_leading_dot_number(self):
                        self.assertEqual(evaluate(".5 + 1"), 1.5)

                    def test_scientific_notation(self):
                        self.assertEqual(evaluate("1e3"), 1000)
                        self.assertEqual(evaluate("2.5e-1 * 4"), 1.0)
                    ''')),
            ],
            mixed=Mixed("raw", InstanceStatus.EMPTY, "the model gave up: an empty patch", raw=""),
        ),
        TaskDef(
            number=4, base=3, version="0.2", setup=3, created_at="2023-09-05T08:03:51Z",
            problem_statement=src('''
                Unknown variable raises KeyError instead of CalcError

                Every other mistake in an expression raises `CalcError` with the position, which our
                web form uses to underline the problem. An unknown variable leaks a bare KeyError:

                ```python
                >>> from tinycalc import evaluate
                >>> evaluate("x + y", {"x": 1})
                Traceback (most recent call last):
                  ...
                KeyError: 'y'
                ```

                Expected: `CalcError("unknown name 'y'")` with `position == 4`, like
                `unknown function` already does.
                '''),
            gold=[Edit("src/tinycalc/evaluate.py",
                       '    if kind == "name":\n        return names[node[1]]\n',
                       '    if kind == "name":\n'
                       '        _, name, position = node\n'
                       '        if name not in names:\n'
                       '            raise CalcError("unknown name %r" % name, position)\n'
                       '        return names[name]\n')],
            tests=[Edit("tests/test_evaluate.py", NAMES_ANCHOR, NAMES_ANCHOR + methods('''
                def test_unknown_variable(self):
                    with self.assertRaises(CalcError) as caught:
                        evaluate("x + y", {"x": 1})
                    self.assertIn("'y'", str(caught.exception))
                    self.assertEqual(caught.exception.position, 4)

                def test_variable_wins_over_constant(self):
                    self.assertEqual(evaluate("e + 1", {"e": 1}), 2)
                '''))],
            mixed=Mixed(
                "raw", InstanceStatus.INVALID_PATCH, "prose instead of a diff",
                raw=("The fix is to check whether the name is known before looking it up in\n"
                     "_evaluate(), and raise CalcError(\"unknown name %r\" % name, position) when it\n"
                     "is not. This keeps the error handling consistent with unknown functions.\n")),
        ),
    ],
)


# --------------------------------------------------------------------------------------------
# Project 3: spans, half-open intervals and inclusive date ranges.
# --------------------------------------------------------------------------------------------

SPANS_PYPROJECT = src('''
    [project]
    name = "spans"
    version = "{version}"
    description = "Half-open intervals and inclusive date ranges."
    requires-python = ">=3.8"
    ''')

SPANS_README = src('''
    # spans

    Half-open intervals `[start, end)` over anything ordered (numbers, dates, datetimes), the
    usual operations on lists of them, and inclusive ranges of calendar days.

    ```python
    >>> from spans import Interval, merge
    >>> merge([Interval(1, 4), Interval(3, 6), Interval(8, 9)])
    [Interval(1, 6), Interval(8, 9)]
    ```

    Run the tests with `PYTHONPATH=src python -m unittest -v`.
    ''')

SPANS_INTERVAL = src('''
    """Half-open intervals [start, end) over any ordered values: numbers, dates, datetimes."""


    class Interval:
        """The values x with start <= x < end. An interval with start == end is empty."""

        __slots__ = ("start", "end")

        def __init__(self, start, end):
            if end < start:
                raise ValueError("interval end %r is before its start %r" % (end, start))
            self.start = start
            self.end = end

        def __repr__(self):
            return "Interval(%r, %r)" % (self.start, self.end)

        def __eq__(self, other):
            if not isinstance(other, Interval):
                return NotImplemented
            return (self.start, self.end) == (other.start, other.end)

        def __lt__(self, other):
            return (self.start, self.end) < (other.start, other.end)

        def __hash__(self):
            return hash((self.start, self.end))

        @property
        def length(self):
            return self.end - self.start

        def is_empty(self):
            return self.start == self.end

        def contains(self, value):
            return self.start <= value < self.end

        def overlaps(self, other):
            """True when the two intervals share at least one value."""
            return self.start <= other.end and other.start <= self.end
    ''')

SPANS_INTERVAL_V2 = SPANS_INTERVAL + "\n" + block('''

    def intersection(self, other):
        """The values in both intervals, or None when they share none."""
        return Interval(max(self.start, other.start), min(self.end, other.end))
    ''')

SPANS_TEST_INTERVAL = src('''
    import unittest
    from datetime import date, timedelta

    from spans.interval import Interval


    class IntervalTest(unittest.TestCase):
        def test_rejects_end_before_start(self):
            with self.assertRaises(ValueError):
                Interval(5, 1)

        def test_length_and_emptiness(self):
            self.assertEqual(Interval(2, 7).length, 5)
            self.assertTrue(Interval(3, 3).is_empty())

        def test_contains_is_half_open(self):
            interval = Interval(0, 10)
            self.assertTrue(interval.contains(0))
            self.assertTrue(interval.contains(9.5))
            self.assertFalse(interval.contains(10))

        def test_works_with_dates(self):
            may = Interval(date(2024, 5, 1), date(2024, 6, 1))
            self.assertTrue(may.contains(date(2024, 5, 31)))
            self.assertEqual(may.length, timedelta(days=31))

        def test_sorting(self):
            self.assertEqual(sorted([Interval(3, 4), Interval(1, 9), Interval(1, 2)]),
                             [Interval(1, 2), Interval(1, 9), Interval(3, 4)])


    class OverlapTest(unittest.TestCase):
        def test_overlapping(self):
            self.assertTrue(Interval(0, 5).overlaps(Interval(4, 8)))

        def test_disjoint(self):
            self.assertFalse(Interval(0, 2).overlaps(Interval(3, 4)))

        def test_contained(self):
            self.assertTrue(Interval(0, 10).overlaps(Interval(2, 3)))
    ''')

SPANS_TEST_INTERVAL_V2 = SPANS_TEST_INTERVAL + src('''


    class IntersectionTest(unittest.TestCase):
        def test_overlapping_intervals(self):
            self.assertEqual(Interval(0, 5).intersection(Interval(3, 8)), Interval(3, 5))

        def test_contained_interval(self):
            self.assertEqual(Interval(0, 10).intersection(Interval(2, 3)), Interval(2, 3))
    ''')

SPANS_OPS = src('''
    """Operations on collections of intervals."""

    from spans.interval import Interval


    def merge(intervals):
        """The union of `intervals` as a sorted list of disjoint intervals; touching ones are joined."""
        merged = []
        for interval in sorted(intervals):
            if merged and interval.start <= merged[-1].end:
                merged[-1] = Interval(merged[-1].start, interval.end)
            else:
                merged.append(interval)
        return merged


    def total_length(intervals):
        """The length covered by the union of `intervals`, counting overlaps once."""
        return sum(interval.length for interval in merge(intervals))


    def gaps(intervals, within):
        """The parts of `within` not covered by any of `intervals`, in order."""
        result = []
        cursor = within.start
        for interval in merge(intervals):
            if interval.end <= cursor:
                continue
            if interval.start >= within.end:
                break
            if interval.start > cursor:
                result.append(Interval(cursor, interval.start))
            cursor = max(cursor, interval.end)
        if cursor < within.end:
            result.append(Interval(cursor, within.end))
        return result
    ''')

SPANS_TEST_OPS = src('''
    import unittest

    from spans.interval import Interval
    from spans.ops import gaps, merge, total_length


    class MergeTest(unittest.TestCase):
        def test_overlapping_intervals_are_joined(self):
            self.assertEqual(merge([Interval(1, 4), Interval(3, 6)]), [Interval(1, 6)])

        def test_touching_intervals_are_joined(self):
            self.assertEqual(merge([Interval(1, 3), Interval(3, 5)]), [Interval(1, 5)])

        def test_disjoint_intervals_are_kept_in_order(self):
            self.assertEqual(merge([Interval(5, 6), Interval(1, 2)]), [Interval(1, 2), Interval(5, 6)])

        def test_empty_input(self):
            self.assertEqual(merge([]), [])


    class TotalLengthTest(unittest.TestCase):
        def test_overlap_counted_once(self):
            self.assertEqual(total_length([Interval(0, 5), Interval(3, 8)]), 8)


    class GapsTest(unittest.TestCase):
        def test_gaps_between_intervals(self):
            self.assertEqual(gaps([Interval(2, 3), Interval(5, 6)], Interval(0, 10)),
                             [Interval(0, 2), Interval(3, 5), Interval(6, 10)])

        def test_no_gaps_when_covered(self):
            self.assertEqual(gaps([Interval(-1, 11)], Interval(0, 10)), [])
    ''')

SPANS_DATERANGE = src('''
    """Inclusive ranges of calendar days, as used in bookings and reports."""

    from datetime import date, timedelta

    from spans.interval import Interval


    class DateRange:
        """The days from `first` to `last`, both included."""

        __slots__ = ("first", "last")

        def __init__(self, first, last):
            if last < first:
                raise ValueError("range ends on %s, before it starts on %s" % (last, first))
            self.first = first
            self.last = last

        @classmethod
        def parse(cls, text):
            """DateRange.parse("2024-01-01..2024-01-31")."""
            try:
                first, last = text.split("..")
                return cls(date.fromisoformat(first.strip()), date.fromisoformat(last.strip()))
            except ValueError as error:
                raise ValueError("not a date range %r: %s" % (text, error)) from None

        def __repr__(self):
            return "DateRange(%r, %r)" % (self.first, self.last)

        def __eq__(self, other):
            if not isinstance(other, DateRange):
                return NotImplemented
            return (self.first, self.last) == (other.first, other.last)

        def __hash__(self):
            return hash((self.first, self.last))

        def __len__(self):
            return (self.last - self.first).days

        def __contains__(self, day):
            return self.first <= day <= self.last

        def __iter__(self):
            for offset in range(len(self)):
                yield self.first + timedelta(days=offset)

        def to_interval(self):
            """The same days as a half-open Interval of dates."""
            return Interval(self.first, self.last + timedelta(days=1))
    ''')

SPANS_TEST_DATERANGE = src('''
    import unittest
    from datetime import date

    from spans.daterange import DateRange
    from spans.interval import Interval


    class DateRangeTest(unittest.TestCase):
        def test_rejects_reversed_range(self):
            with self.assertRaises(ValueError):
                DateRange(date(2024, 3, 2), date(2024, 3, 1))

        def test_parse(self):
            self.assertEqual(DateRange.parse("2024-01-01..2024-01-31"),
                             DateRange(date(2024, 1, 1), date(2024, 1, 31)))

        def test_parse_error_names_the_text(self):
            with self.assertRaises(ValueError) as caught:
                DateRange.parse("January")
            self.assertIn("January", str(caught.exception))

        def test_contains_both_ends(self):
            march = DateRange(date(2024, 3, 1), date(2024, 3, 31))
            self.assertIn(date(2024, 3, 1), march)
            self.assertIn(date(2024, 3, 31), march)
            self.assertNotIn(date(2024, 4, 1), march)

        def test_to_interval(self):
            self.assertEqual(DateRange(date(2024, 3, 1), date(2024, 3, 2)).to_interval(),
                             Interval(date(2024, 3, 1), date(2024, 3, 3)))
    ''')


def spans_init(version: str, modules: list[str]) -> str:
    imports = {
        "daterange": "from spans.daterange import DateRange",
        "interval": "from spans.interval import Interval",
        "ops": "from spans.ops import gaps, merge, total_length",
    }
    return ('"""spans: half-open intervals and inclusive date ranges."""\n\n'
            + "\n".join(imports[m] for m in sorted(modules)) + f'\n\n__version__ = "{version}"\n')


MERGE_ANCHOR = "        self.assertEqual(merge([]), [])\n"
OVERLAP_ANCHOR = "        self.assertTrue(Interval(0, 10).overlaps(Interval(2, 3)))\n"

SPANS = Project(
    name="spans",
    author="Lena Brandt <lena.brandt@example.org>",
    commits=[
        Commit("Interval: half-open intervals with overlap checks", "2024-01-08T08:15:09+01:00", {
            "README.md": SPANS_README,
            "pyproject.toml": SPANS_PYPROJECT.format(version="0.1.0.dev0"),
            "src/spans/__init__.py": spans_init("0.1.0.dev0", ["interval"]),
            "src/spans/interval.py": SPANS_INTERVAL,
            "tests/__init__.py": "",
            "tests/test_interval.py": SPANS_TEST_INTERVAL,
        }),
        Commit("Add merge(), total_length() and gaps()", "2024-01-20T13:27:44+01:00", {
            "src/spans/__init__.py": spans_init("0.1.0.dev0", ["interval", "ops"]),
            "src/spans/ops.py": SPANS_OPS,
            "tests/test_ops.py": SPANS_TEST_OPS,
        }),
        Commit("Add DateRange for inclusive ranges of days; release 0.1.0", "2024-02-03T17:02:31+01:00", {
            "pyproject.toml": SPANS_PYPROJECT.format(version="0.1.0"),
            "src/spans/__init__.py": spans_init("0.1.0", ["interval", "ops", "daterange"]),
            "src/spans/daterange.py": SPANS_DATERANGE,
            "tests/test_daterange.py": SPANS_TEST_DATERANGE,
        }, tag="v0.1.0"),
        Commit("Add Interval.intersection(); release 0.2.0", "2024-02-25T11:44:58+01:00", {
            "pyproject.toml": SPANS_PYPROJECT.format(version="0.2.0"),
            "src/spans/__init__.py": spans_init("0.2.0", ["interval", "ops", "daterange"]),
            "src/spans/interval.py": SPANS_INTERVAL_V2,
            "tests/test_interval.py": SPANS_TEST_INTERVAL_V2,
        }, tag="v0.2.0"),
    ],
    tasks=[
        TaskDef(
            number=1, base=1, version="0.1", setup=2, created_at="2024-01-29T10:05:37Z",
            problem_statement=src('''
                overlaps() is True for intervals that only touch

                Intervals are documented as half-open, so `[0, 3)` and `[3, 5)` have no value in
                common, yet:

                ```python
                >>> from spans import Interval
                >>> Interval(0, 3).overlaps(Interval(3, 5))
                True
                ```

                We use this to detect double bookings, and back-to-back meetings (one ends at 10:00,
                the next starts at 10:00) are reported as conflicts.
                '''),
            gold=[Edit("src/spans/interval.py",
                       "        return self.start <= other.end and other.start <= self.end\n",
                       "        return self.start < other.end and other.start < self.end\n")],
            tests=[Edit("tests/test_interval.py", OVERLAP_ANCHOR, OVERLAP_ANCHOR + methods('''
                def test_touching_intervals_do_not_overlap(self):
                    self.assertFalse(Interval(0, 3).overlaps(Interval(3, 5)))
                    self.assertFalse(Interval(3, 5).overlaps(Interval(0, 3)))

                def test_overlap_is_symmetric(self):
                    pairs = [(Interval(0, 5), Interval(4, 8)), (Interval(0, 2), Interval(3, 4)),
                             (Interval(1, 2), Interval(2, 3))]
                    for first, second in pairs:
                        self.assertEqual(first.overlaps(second), second.overlaps(first))
                '''))],
            mixed=Mixed(
                "raw", InstanceStatus.APPLY_FAILED,
                "a diff against lines that are not in the file (a hallucinated version of interval.py)",
                patch_status=PatchStatus.DOES_NOT_APPLY,
                raw=src('''
                    --- a/src/spans/interval.py
                    +++ b/src/spans/interval.py
                    @@ -40,5 +40,5 @@ class Interval:
                         def overlaps(self, other: "Interval") -> bool:
                             """Return whether the intervals intersect."""
                    -        if self.lower > other.upper or other.lower > self.upper:
                    +        if self.lower >= other.upper or other.lower >= self.upper:
                                 return False
                             return True
                    ''')),
        ),
        TaskDef(
            number=2, base=2, version="0.1", setup=2, created_at="2024-02-12T15:48:20Z",
            problem_statement=src('''
                merge() shrinks the union when one interval contains another

                ```python
                >>> from spans import Interval, merge, total_length
                >>> merge([Interval(1, 10), Interval(2, 3)])
                [Interval(1, 3)]
                >>> total_length([Interval(0, 10), Interval(2, 3)])
                3
                ```

                Expected `[Interval(1, 10)]` and 10. The merged interval seems to take the end of
                whichever interval came last, even when it ends earlier. `gaps()` reports free time
                that is not free because of this.
                '''),
            gold=[Edit("src/spans/ops.py",
                       "            merged[-1] = Interval(merged[-1].start, interval.end)\n",
                       "            merged[-1] = Interval(merged[-1].start, max(merged[-1].end, interval.end))\n")],
            tests=[
                Edit("tests/test_ops.py", MERGE_ANCHOR, MERGE_ANCHOR + methods('''
                    def test_contained_interval_does_not_shrink_the_union(self):
                        self.assertEqual(merge([Interval(1, 10), Interval(2, 3)]), [Interval(1, 10)])

                    def test_chain_with_a_nested_interval(self):
                        intervals = [Interval(0, 4), Interval(1, 2), Interval(3, 8), Interval(9, 12)]
                        self.assertEqual(merge(intervals), [Interval(0, 8), Interval(9, 12)])
                    ''')),
                Edit("tests/test_ops.py",
                     "        self.assertEqual(total_length([Interval(0, 5), Interval(3, 8)]), 8)\n",
                     "        self.assertEqual(total_length([Interval(0, 5), Interval(3, 8)]), 8)\n" + methods('''
                    def test_nested_interval_counted_once(self):
                        self.assertEqual(total_length([Interval(0, 10), Interval(2, 3)]), 10)
                    ''')),
            ],
            mixed=Mixed(
                "edits", InstanceStatus.RESOLVED, "a different fix: only extend the last interval",
                outcome="Resolved", patch_status=PatchStatus.APPLIED,
                edits=[Edit("src/spans/ops.py",
                            '''    for interval in sorted(intervals):
        if merged and interval.start <= merged[-1].end:
            merged[-1] = Interval(merged[-1].start, interval.end)
        else:
            merged.append(interval)
''',
                            '''    for interval in sorted(intervals):
        if not merged or interval.start > merged[-1].end:
            merged.append(interval)
        elif interval.end > merged[-1].end:
            merged[-1] = Interval(merged[-1].start, interval.end)
''')]),
        ),
        TaskDef(
            number=3, base=3, version="0.2", setup=3, created_at="2024-03-04T09:30:12Z",
            problem_statement=src('''
                len(DateRange) and iteration miss the last day

                `DateRange` is documented as inclusive ("both included") and `in` agrees, but:

                ```python
                >>> from datetime import date
                >>> from spans import DateRange
                >>> r = DateRange(date(2024, 3, 1), date(2024, 3, 1))
                >>> date(2024, 3, 1) in r
                True
                >>> len(r), list(r)
                (0, [])
                ```

                A one-day range should have length 1 and yield that day; March should have 31
                days, not 30.
                '''),
            gold=[Edit("src/spans/daterange.py",
                       "        return (self.last - self.first).days\n",
                       "        return (self.last - self.first).days + 1  # both ends are included\n")],
            tests=[Edit("tests/test_daterange.py", "", methods('''
                def test_length_counts_both_ends(self):
                    self.assertEqual(len(DateRange(date(2024, 3, 1), date(2024, 3, 31))), 31)
                    self.assertEqual(len(DateRange(date(2024, 3, 1), date(2024, 3, 1))), 1)

                def test_iteration_includes_the_last_day(self):
                    days = list(DateRange(date(2024, 2, 27), date(2024, 3, 1)))
                    self.assertEqual(days, [date(2024, 2, 27), date(2024, 2, 28), date(2024, 2, 29),
                                            date(2024, 3, 1)])
                '''))],
            mixed=Mixed(
                "edits", InstanceStatus.UNRESOLVED,
                "makes `in` exclusive to match len() instead: nothing fixed, a passing test broken (Regression)",
                outcome="Regression", patch_status=PatchStatus.APPLIED,
                edits=[Edit("src/spans/daterange.py",
                            "        return self.first <= day <= self.last\n",
                            "        return self.first <= day < self.last\n")]),
        ),
        TaskDef(
            number=4, base=3, version="0.2", setup=3, created_at="2024-03-11T16:12:45Z",
            problem_statement=src('''
                Interval.intersection() raises ValueError for disjoint intervals

                The docstring says it returns None when the intervals share no value, but:

                ```python
                >>> from spans import Interval
                >>> Interval(0, 2).intersection(Interval(5, 6))
                ValueError: interval end 2 is before its start 5
                >>> Interval(0, 2).intersection(Interval(2, 4))
                Interval(2, 2)
                ```

                Expected None in both cases (the second pair only touches).
                '''),
            gold=[Edit("src/spans/interval.py",
                       "        return Interval(max(self.start, other.start), min(self.end, other.end))\n",
                       "        start = max(self.start, other.start)\n"
                       "        end = min(self.end, other.end)\n"
                       "        if start >= end:\n"
                       "            return None\n"
                       "        return Interval(start, end)\n")],
            tests=[Edit("tests/test_interval.py", "", methods('''
                def test_disjoint_intervals_have_no_intersection(self):
                    self.assertIsNone(Interval(0, 2).intersection(Interval(5, 6)))

                def test_touching_intervals_have_no_intersection(self):
                    self.assertIsNone(Interval(0, 2).intersection(Interval(2, 4)))
                '''))],
            mixed=Mixed(
                "offset", InstanceStatus.RESOLVED,
                "a correct fix whose hunk line numbers are off by a few lines (git apply finds it)",
                outcome="Resolved", patch_status=PatchStatus.APPLIED,
                edits=[Edit("src/spans/interval.py",
                            "        return Interval(max(self.start, other.start), min(self.end, other.end))\n",
                            "        start, end = max(self.start, other.start), min(self.end, other.end)\n"
                            "        return Interval(start, end) if start < end else None\n")]),
        ),
    ],
)

PROJECTS = [TEXTKIT, TINYCALC, SPANS]


# --------------------------------------------------------------------------------------------
# Building: repositories, diffs, test runs, verdicts.
# --------------------------------------------------------------------------------------------

PARSE = get_parser("unittest")


class BuildError(Exception):
    pass


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    base_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1",
                "LC_ALL": "C", "TZ": "UTC"}
    proc = subprocess.run(["git", "-c", "core.autocrlf=false", "-c", "commit.gpgsign=false", *args],
                          cwd=cwd, env={**base_env, **(env or {})}, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"git {' '.join(args)} failed in {cwd}:\n{proc.stderr}")
    return proc.stdout


def build_repository(project: Project, dest: Path) -> list[str]:
    """Create the project's repository with its whole history; return the commit ids in order."""
    dest.mkdir(parents=True)
    git(dest, "init", "--quiet", "--initial-branch=main")
    name, email = project.author[:-1].split(" <")
    shas = []
    for commit in project.commits:
        for rel, content in commit.files.items():
            path = dest / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        git(dest, "add", "--all")
        identity = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": commit.date,
                    "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email, "GIT_COMMITTER_DATE": commit.date}
        git(dest, "commit", "--quiet", "--message", commit.message, env=identity)
        shas.append(git(dest, "rev-parse", "HEAD").strip())
        if commit.tag:
            git(dest, "tag", commit.tag)
    return shas


def checkout(repo: Path, sha: str, dest: Path) -> Path:
    git(repo.parent, "clone", "--quiet", "--shared", "--no-checkout", str(repo), str(dest))
    git(dest, "checkout", "--quiet", "--detach", sha)
    return dest


def apply_edits(tree: Path, edits: list[Edit]) -> None:
    for edit in edits:
        path = tree / edit.path
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if edit.old:
            if text.count(edit.old) != 1:
                raise BuildError(f"{edit.path}: the text to replace occurs {text.count(edit.old)} times, "
                                 f"not once:\n{edit.old}")
            text = text.replace(edit.old, edit.new)
        else:
            text += edit.new
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def diff_of(tree: Path, edits: list[Edit]) -> str:
    """The edits as a git diff against the checked-out commit; the tree is left clean."""
    apply_edits(tree, edits)
    git(tree, "add", "--all")
    patch = git(tree, "diff", "--cached", "--no-color", "--no-ext-diff", "--no-renames")
    git(tree, "reset", "--quiet", "--hard")
    return patch


def git_apply(tree: Path, patch: str) -> None:
    proc = subprocess.run(["git", "apply", "--verbose", "-"], cwd=tree, input=patch, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise BuildError(f"git apply failed in {tree}:\n{proc.stderr}")


def run_tests(tree: Path, command: list[str], python: str) -> dict[str, TestStatus]:
    """Run the task's test command with `python` and parse it the way the harness does."""
    argv = [python if part == "python" else part for part in command]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tree), "LANG": "C.UTF-8",
           "PYTHONDONTWRITEBYTECODE": "1", **DEMO_ENV.env_vars}
    proc = subprocess.run(argv, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=300)
    return PARSE(proc.stdout)


def test_argv(test_patch: str) -> list[str]:
    """The harness's own test command line for the task (test files named by the test patch)."""
    return shlex.split(test_command(DEMO_ENV, test_patch))


def check_history(project: Project, repo: Path, shas: list[str], work: Path, pythons: list[str]) -> None:
    """Every test of every commit passes: the bugs are ones nobody had a test for yet."""
    for index, sha in enumerate(shas):
        tree = checkout(repo, sha, work / f"history-{index}")
        for python in pythons:
            statuses = run_tests(tree, ["python", "-m", "unittest", "-v"], python)
            bad = {t: s.value for t, s in statuses.items() if s is not TestStatus.PASSED}
            if not statuses or bad:
                raise BuildError(f"{project.name} commit {index} ({python}): tests do not all pass: {bad}")
        shutil.rmtree(tree)


def shift_hunks(patch: str, offset: int) -> str:
    def shifted(match: re.Match[str]) -> str:
        old, old_count, new, new_count = match.groups()
        return f"@@ -{int(old) + offset}{old_count or ''} +{int(new) + offset}{new_count or ''} @@"

    return re.sub(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", shifted, patch, flags=re.M)


def break_hunk_counts(patch: str) -> str:
    """Claim two more lines on each side of the first hunk than its body has (a common model slip)."""
    def wrong(match: re.Match[str]) -> str:
        old, old_count, new, new_count = (int(g) for g in match.groups())
        return f"@@ -{old},{old_count + 2} +{new},{new_count + 2} @@"

    return re.sub(r"^@@ -(\d+),(\d+) \+(\d+),(\d+) @@", wrong, patch, count=1, flags=re.M)


def model_patch(mixed: Mixed, tree: Path, gold: str) -> str:
    """The text of the demo-mixed prediction; diffs lose git's `index` lines, as model output does."""
    if mixed.kind == "raw":
        return mixed.raw
    if mixed.kind == "bad_counts":
        text = break_hunk_counts(gold)
    else:
        text = diff_of(tree, mixed.edits)
        if mixed.kind == "offset":
            text = shift_hunks(text, 6)
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("index "))


def verdict_of(task: dict, text: str, tree: Path, python: str) -> dict:
    """Apply a prediction with issuebench's patch engine, run the tests, grade: what the harness does."""
    applied = apply_patch(tree, text)
    base = {"patch_status": applied.status.value, "apply_method": applied.method}
    if applied.status is PatchStatus.EMPTY:
        return {"status": InstanceStatus.EMPTY.value, "outcome": None, **base}
    if applied.status is PatchStatus.INVALID:
        return {"status": InstanceStatus.INVALID_PATCH.value, "outcome": None, **base}
    if not applied.applied:
        return {"status": InstanceStatus.APPLY_FAILED.value, "outcome": None, **base}
    git_apply(tree, task["test_patch"])
    statuses = run_tests(tree, test_argv(task["test_patch"]), python)
    graded = grade(statuses, task["FAIL_TO_PASS"], task["PASS_TO_PASS"])
    status = InstanceStatus.RESOLVED if graded.resolved else InstanceStatus.UNRESOLVED
    return {"status": status.value, "outcome": graded.outcome.value, **base}


def build_task(project: Project, definition: TaskDef, repo: Path, shas: list[str], work: Path,
               pythons: list[str]) -> tuple[dict, dict, dict]:
    """(task row, demo-mixed prediction, its measured verdict)."""
    instance_id = f"{OWNER}__{project.name}-{definition.number}"
    base = shas[definition.base]
    tree = checkout(repo, base, work / instance_id)
    gold = diff_of(tree, definition.gold)
    test_patch = diff_of(tree, definition.tests)
    if any(is_test_path(p) for p in files_touched(gold)) or not all(is_test_path(p) for p in files_touched(test_patch)):
        raise BuildError(f"{instance_id}: the gold patch must touch only code, the test patch only tests")
    command = test_argv(test_patch)
    runs: dict[str, tuple[dict, dict]] = {}
    for python in pythons:
        git_apply(tree, test_patch)
        before = run_tests(tree, command, python)
        git_apply(tree, gold)
        after = run_tests(tree, command, python)
        git(tree, "reset", "--quiet", "--hard")
        git(tree, "clean", "-fdq")
        runs[python] = (before, after)
    before, after = runs[pythons[0]]
    for python, other in runs.items():
        if other != (before, after):
            raise BuildError(f"{instance_id}: {python} gives different results from {pythons[0]}")
    not_passing = {t: s.value for t, s in after.items() if s is not TestStatus.PASSED}
    if not_passing:
        raise BuildError(f"{instance_id}: tests still fail with the gold patch: {not_passing}")
    fail_to_pass = sorted(t for t in after if before.get(t) is not TestStatus.PASSED)
    pass_to_pass = sorted(t for t in after if before.get(t) is TestStatus.PASSED)
    if not fail_to_pass:
        raise BuildError(f"{instance_id}: no test fails before the gold patch")
    row = {
        "repo": f"{OWNER}/{project.name}",
        "instance_id": instance_id,
        "base_commit": base,
        "patch": gold,
        "test_patch": test_patch,
        "problem_statement": definition.problem_statement,
        "hints_text": definition.hints_text,
        "created_at": definition.created_at,
        "version": definition.version,
        "FAIL_TO_PASS": fail_to_pass,
        "PASS_TO_PASS": pass_to_pass,
        "environment_setup_commit": shas[definition.setup],
        "env": DEMO_ENV.model_dump(mode="json"),
    }
    text = model_patch(definition.mixed, tree, gold)
    prediction = {"instance_id": instance_id, "model_name_or_path": "demo-mixed", "model_patch": text}
    measured = verdict_of(row, text, tree, pythons[0])
    expected = {"status": definition.mixed.status.value, "outcome": definition.mixed.outcome,
                "patch_status": definition.mixed.patch_status.value if definition.mixed.patch_status else None}
    if definition.mixed.kind == "raw" and not text.strip():
        expected["patch_status"] = PatchStatus.EMPTY.value
    elif definition.mixed.status is InstanceStatus.INVALID_PATCH:
        expected["patch_status"] = PatchStatus.INVALID.value
    got = {k: measured[k] for k in expected}
    if got != expected:
        raise BuildError(f"{instance_id}: the demo-mixed prediction was written to give {expected}, "
                         f"but gives {got}\n{text}")
    shutil.rmtree(tree)
    return row, prediction, {**measured, "why": definition.mixed.why}


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def build(out: Path, pythons: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="issuebench-demo-build-") as tmp:
        work = Path(tmp)
        tasks, mixed, details = [], [], {}
        for project in PROJECTS:
            repo = work / project.name / "repo"
            shas = build_repository(project, repo)
            check_history(project, repo, shas, work / project.name, pythons)
            git(repo, "bundle", "create", "--quiet", str(out / f"{project.name}.bundle"), "--all")
            for definition in project.tasks:
                row, prediction, verdict = build_task(project, definition, repo, shas, work / project.name, pythons)
                tasks.append(row)
                mixed.append(prediction)
                details[row["instance_id"]] = verdict
                print(f"{row['instance_id']}: F2P {len(row['FAIL_TO_PASS'])}, P2P {len(row['PASS_TO_PASS'])}; "
                      f"demo-mixed -> {verdict['status']} ({verdict['outcome'] or verdict['patch_status']})")
    write_jsonl(out / "tasks.jsonl", tasks)
    write_jsonl(out / "mixed.jsonl", mixed)
    write_jsonl(out / "empty.jsonl", [{"instance_id": t["instance_id"], "model_name_or_path": "demo-empty",
                                       "model_patch": ""} for t in tasks])
    write_json(out / "expected_mixed.json", {i: d["status"] for i, d in details.items()})
    write_json(out / "expected_mixed_details.json", details)


def bundle_heads(path: Path) -> str:
    return git(path.parent, "bundle", "list-heads", str(path))


def same_data(built: Path, committed: Path) -> list[str]:
    """Files that differ between two builds (bundles compared by their refs, not their bytes)."""
    differ = []
    for path in sorted(built.iterdir()):
        other = committed / path.name
        if not other.exists():
            differ.append(path.name)
        elif path.suffix == ".bundle":
            if bundle_heads(path) != bundle_heads(other):
                differ.append(path.name)
        elif not filecmp.cmp(path, other, shallow=False):
            differ.append(path.name)
    return differ


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append", default=[],
                        help="an extra interpreter that must give the same test results (repeatable)")
    parser.add_argument("--check", action="store_true", help="rebuild and compare with the committed data")
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="where to write the data")
    args = parser.parse_args()
    pythons = [sys.executable, *args.python]
    try:
        if args.check:
            with tempfile.TemporaryDirectory(prefix="issuebench-demo-check-") as tmp:
                build(Path(tmp), pythons)
                differ = same_data(Path(tmp), args.out)
            if differ:
                print(f"demo data is out of date: {', '.join(differ)} differ; run scripts/build_demo.py")
                return 1
            print("demo data is up to date")
            return 0
        build(args.out, pythons)
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
