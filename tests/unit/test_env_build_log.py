"""A node install that fails for a package the registry no longer serves says which package."""

from __future__ import annotations

from issuebench.envs.build_log import last_error_line, registry_miss_line

# Lines of a real yarn 3 install of babel at a 2021 commit (a locked release since unpublished).
YARN = """➤ YN0000: ┌ Fetch step
➤ YN0035: │ babel-plugin-polyfill-es-shims@npm:0.5.0: The remote server failed to provide the requested resource
➤ YN0035: │   Response Code: 404 (Not Found)
➤ YN0035: │   Request Method: GET
➤ YN0013: │ 5 packages were already cached, 1358 had to be fetched
➤ YN0000: └ Completed in 1m 22s
➤ YN0000: Failed with errors in 1m 23s
"""
NPM = """npm ERR! code E404
npm ERR! 404 Not Found - GET registry/left-pad/-/left-pad-9.9.9.tgz - Not found
npm ERR! 404  'left-pad@9.9.9' is not in this registry.
npm ERR! A complete log of this run can be found in: ~/.npm/_logs/debug.log
"""


def test_the_package_the_registry_cannot_give_is_named():
    assert last_error_line(YARN) == "➤ YN0000: Failed with errors in 1m 23s"  # what it said before
    assert "babel-plugin-polyfill-es-shims@npm:0.5.0" in (registry_miss_line(YARN) or "")
    assert registry_miss_line(NPM) == ("the registry cannot give a locked package: "
                                       "npm ERR! 404  'left-pad@9.9.9' is not in this registry.")


def test_other_failures_are_left_to_the_last_error_line():
    assert registry_miss_line("gyp ERR! build error\nnpm ERR! code 1\n") is None


# pip 23's output for a setup.py that exits with its own message.
PIP_FRAME = """  Preparing metadata (setup.py): finished with status 'error'
  error: subprocess-exited-with-error
  × python setup.py egg_info did not run successfully.
  ╰─> [1 lines of output]
      frobnicator error: the widget table is not configured
      [end of output]
  note: This error originates from a subprocess, and is likely not a problem with pip.
error: metadata-generation-failed
× Encountered error while generating package metadata.
╰─> See above for output.
"""


def test_a_failed_build_is_named_by_its_own_output_not_pips_frame():
    assert last_error_line(PIP_FRAME) == "frobnicator error: the widget table is not configured"
