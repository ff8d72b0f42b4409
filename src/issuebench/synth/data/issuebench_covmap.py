"""pytest plugin run inside the sandbox by `issuebench synth`: record which test executes which line.

Loaded with `-p issuebench_covmap` from the scratch folder put on PYTHONPATH. Every test runs in
its own coverage context named by its pytest node id; what runs while a test module is imported
is in the context `collect:<module node id>` (its tests may depend on it); what runs anywhere
else outside a test (start-up, conftest imports) lands in the empty context. The data file goes
next to this plugin.
"""

import os

import coverage
import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
_cov = None


def pytest_configure(config):
    global _cov
    if _cov is None:
        _cov = coverage.Coverage(data_file=os.path.join(_HERE, "covdata"), source=[os.getcwd()],
                                 config_file=False, branch=False)
        _cov.start()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _cov is not None:
        _cov.switch_context(item.nodeid)
    yield
    if _cov is not None:
        _cov.switch_context("")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    module = _cov is not None and isinstance(collector, pytest.Module)
    if module:
        _cov.switch_context("collect:" + collector.nodeid)
    yield
    if module:
        _cov.switch_context("")


def pytest_unconfigure(config):
    global _cov
    if _cov is not None:
        _cov.stop()
        _cov.save()
        _cov = None
