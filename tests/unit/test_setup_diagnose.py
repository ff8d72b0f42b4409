from issuebench.setup.diagnose import diagnose


def test_missing_modules_are_all_collected() -> None:
    log = ("ERROR collecting tests/test_a.py\nE   ModuleNotFoundError: No module named 'yaml'\n"
           "ERROR collecting tests/test_b.py\nE   ModuleNotFoundError: No module named 'dateutil.parser'\n")
    found = diagnose(log)
    assert found is not None and found.kind == "missing_module" and found.fix == "add_module"
    assert found.found["module"] == ["yaml", "dateutil.parser"]
    assert "No module named 'yaml'" in found.excerpt


def test_a_module_name_the_short_summary_cut_is_not_a_module() -> None:
    # transitions: the error's own line, then pytest's summary cut to the terminal's width.
    log = ("E   ModuleNotFoundError: No module named 'pycodestyle'\n"
           "ERROR tests/test_codestyle.py - ModuleNotFoundError: No module named 'pycodes...\n"
           "ImportError: No module named six.moves\n")
    found = diagnose(log)
    assert found is not None and found.found["module"] == ["pycodestyle", "six.moves"]


def test_removed_stdlib_module_means_python_version() -> None:
    found = diagnose("  File \"x.py\", line 1\n    import imp\nModuleNotFoundError: No module named 'imp'\n")
    assert found is not None and found.kind == "python_version" and found.found["module"] == ["imp"]
    # importlib_metadata must not look like imp
    other = diagnose("ModuleNotFoundError: No module named 'importlib_metadata'\n")
    assert other is not None and other.kind == "missing_module"


def test_build_and_resolution_failures() -> None:
    assert diagnose("error in pkg setup command: use_2to3 is invalid.").kind == "build_failure"
    assert diagnose("  × No solution found when resolving dependencies:\n").kind == "incompatible_dependency"
    assert diagnose("ImportError: cannot import name 'Mapping' from 'collections' (/usr/x)").args == {
        "max_python": "3.9"}


def test_pytest_options_and_no_tests() -> None:
    found = diagnose("ERROR: usage: pytest [options]\npytest: error: unrecognized arguments: --cov=pkg --cov-report\n")
    assert found.kind == "pytest_option" and found.found["option"] == ["--cov=pkg"]
    assert diagnose("collected 0 items\n\n=== no tests ran in 0.01s ===").kind == "test_command_wrong"
    assert diagnose("5 passed, 1 failed") is None
