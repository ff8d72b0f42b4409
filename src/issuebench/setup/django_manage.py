"""A Django project whose tests run through its own `manage.py test` or `runtests.py` (tox: `coverage run
./tests/manage.py test core`): the settings module that script sets by default, and the folder it
runs from, which Python puts first on the path (django-import-export: `tests/manage.py` sets
`settings`, a module of `tests/`). Setup then runs Django's runner as that script would:
`python -m django test` with the same settings module and that folder on PYTHONPATH, its test
labels named from that folder."""

from __future__ import annotations

import posixpath
import re

from issuebench.setup.facts import Facts
from issuebench.setup.source import SourceTree

# A command that runs a manage.py's `test`, and the script's path as written.
_MANAGE_TEST = re.compile(r"(?:^|[\s=])(?:\./)?((?:[\w.-]+/)*manage\.py) test\b")
# `python -m manage test`: the root's manage.py run as a module.
_MANAGE_MODULE_TEST = re.compile(r"-m manage test\b")
# A project's own runner script (wagtail's CI: `coverage run runtests.py`), which sets the settings.
_RUNTESTS = re.compile(r"(?:^|[\s=])(?:\./)?((?:[\w.-]+/)*runtests\.py)\b")
# manage.py's default: os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings"), or a
# runtests.py's plain assignment: os.environ["DJANGO_SETTINGS_MODULE"] = "wagtail.test.settings".
_SETDEFAULT = re.compile(r"(?:setdefault\(\s*[\"']DJANGO_SETTINGS_MODULE[\"']\s*,|"
                         r"\[\s*[\"']DJANGO_SETTINGS_MODULE[\"']\s*\]\s*=)\s*[\"']([A-Za-z_][\w.]*)[\"']")


def read_manage_py(facts: Facts, tree: SourceTree) -> None:
    """Fill the settings module (when no command named one) and the script's folder from the
    manage.py a test command runs."""
    for command in facts.test_commands:
        found = _MANAGE_TEST.search(command) or _RUNTESTS.search(command)
        if not found and not _MANAGE_MODULE_TEST.search(command):
            continue
        path = posixpath.normpath(found.group(1)) if found else "manage.py"
        default = _SETDEFAULT.search(tree.read(path) or "")
        settings = facts.django_settings or (default.group(1) if default else None)
        if tree.exists(path) and settings:
            facts.django_settings = settings
            facts.django_path = posixpath.dirname(path) or None
            return
