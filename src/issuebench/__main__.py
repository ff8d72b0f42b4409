"""`python -m issuebench` is the `issuebench` command."""

from issuebench.cli import main

main()
