"""`python -m issuebench` is the `issuebench` command."""

from issuebench.cli.entry import main

main()
