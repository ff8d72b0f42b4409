"""Find the test output inside a full instance log.

The eval script prints `>>>>> Start Test Output` before the test command and
`>>>>> End Test Output` after it. The reference harness trusts the first occurrence of each, so
code under test can print fake markers (and fake results after them). issuebench's own runs add a
random nonce per run to both markers; code under test cannot know it, so with a nonce only the
marker lines carrying it count.
"""

from __future__ import annotations

import re

START_TEST_OUTPUT = ">>>>> Start Test Output"
END_TEST_OUTPUT = ">>>>> End Test Output"
# The test command's exit status, recorded after the end marker (the reference's 5.x logs, and ours).
EXIT_CODE_MARKER = ">>>>> Test Exit Code"
_EXIT_CODE = re.compile(rf"^{re.escape(EXIT_CODE_MARKER)}:\s*(-?\d+)\s*$", re.MULTILINE)


def extract_test_output(text: str, nonce: str | None = None) -> str | None:
    """The text between the start and end markers, or None when either marker is missing.

    Without a nonce this is the reference's rule: the first start marker, then everything up to
    the first end marker after it. With a nonce the start is the first marker carrying the nonce
    and the end is the last one carrying it (the harness prints it after the tests finish, so
    anything the tests printed lies before it).
    """
    if nonce is None:
        if START_TEST_OUTPUT not in text or END_TEST_OUTPUT not in text:
            return None
        after_start = text.split(START_TEST_OUTPUT, 1)[1]
        return after_start.split(END_TEST_OUTPUT, 1)[0]

    # The nonce must be followed by whitespace or the end of text, so a nonce that happens to be
    # a prefix of a longer token is not accepted.
    tail = rf" {re.escape(nonce)}(?=\s|$)"
    start = re.search(re.escape(START_TEST_OUTPUT) + tail, text)
    if start is None:
        return None
    ends = list(re.finditer(re.escape(END_TEST_OUTPUT) + tail, text[start.end():]))
    if not ends:
        return None
    return text[start.end(): start.end() + ends[-1].start()]


def recorded_exit_code(text: str, nonce: str | None = None) -> int | None:
    """The exit status recorded after the (last) end marker, or None when the log has none.

    Only what follows the end marker counts: a line printed by the code under test sits inside
    the test output, before it.
    """
    end = END_TEST_OUTPUT + (f" {nonce}" if nonce else "")
    position = text.rfind(end)
    if position < 0:
        return None
    found = _EXIT_CODE.search(text, position + len(end))
    return int(found.group(1)) if found else None
