"""`python -m atipkit.cli`: the same as the `atip` command."""

from atipkit.cli import main

main()
