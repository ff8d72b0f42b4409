"""`python -m issuebench` is the `issuebench` command."""

from issuebench.cli.main import main

main()
