"""`atip completion SHELL`: the shell completion script, Click's own for atip's tree."""

from __future__ import annotations

from typing import Annotated, Literal

from atipkit.app import Argument, Document
from atipkit.cli import app
from atipkit.cli._effects import read_only


@app.command(effects=read_only(reads_files=False, stdin="none"))
def completion(
    shell: Annotated[Literal["bash", "zsh", "fish"], Argument(help="The shell to complete in.")],
) -> Document:
    """Print the script that completes atip's commands and options in bash, zsh or fish.

    Load it from the shell's startup file (--plain prints the script itself; a pipe
    otherwise gets the JSON envelope):

    \b
      bash (~/.bashrc):  eval "$(atip completion bash --plain)"
      zsh (~/.zshrc):    eval "$(atip completion zsh --plain)"
      fish:              atip completion fish --plain > ~/.config/fish/completions/atip.fish

    Completion needs bash 4.4 or later. The script calls atip on each Tab, which
    answers from the command tree and imports only the commands it completes.
    """
    from click.shell_completion import get_completion_class

    from atipkit.cli import cli

    complete = get_completion_class(shell)
    assert complete is not None  # Click has all three
    variable = f"_{app.name.replace('-', '_').replace('.', '_')}_COMPLETE".upper()
    return Document(complete(cli, {}, app.name, variable).source(), media_type="text/plain")
