"""`python -m issuebench` exits with the status it chose after a Ctrl-C it caught, even when the
interrupt passed through an exec() of source text (a dataclass or namedtuple being made): CPython
would otherwise end such a process by SIGINT (-2), whatever status it exited with."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# Stands in for issuebench.cli.main before it is imported: reading its `main` (while the CLI is
# still importing) or calling it (while a command runs) meets a Ctrl-C inside exec()'d source.
_STUB = '''
import sys, types

def _interrupted_in_exec():
    exec("raise KeyboardInterrupt")

class _Cli(types.ModuleType):
    @property
    def main(self):
        if "{when}" == "import":
            _interrupted_in_exec()
        def run():
            try:
                _interrupted_in_exec()
            except KeyboardInterrupt:
                sys.stderr.write("interrupted\\n")
                raise SystemExit(130)
        return run

sys.modules["issuebench.cli.main"] = _Cli("issuebench.cli.main")
from issuebench.cli.entry import main
main()
'''


@pytest.mark.parametrize("when", ["import", "run"])
def test_a_caught_interrupt_exits_130_not_by_sigint(tmp_path: Path, when: str) -> None:
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "__main__.py").write_text(_STUB.replace("{when}", when))
    done = subprocess.run([sys.executable, "-m", "probe"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "interrupted\n"
