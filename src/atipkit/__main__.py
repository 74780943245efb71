"""`python -m atipkit`: the `atip` command, for environments where scripts are not on PATH."""

from atipkit.cli import main

main()
