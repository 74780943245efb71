"""Exact ATIP metadata from the objects that define a CLI (Click, Typer, argparse), for
authors who want `--agent` without writing JSON by hand. Names are loaded on first use,
so Click is imported only for a Click program."""

from __future__ import annotations

from typing import TYPE_CHECKING

from atipkit._exports import lazy_exports

if TYPE_CHECKING:
    from atipkit.introspect.argparse import add_agent_flag as add_agent_flag
    from atipkit.introspect.argparse import tool_from_argparse as tool_from_argparse
    from atipkit.introspect.click import AtipArgument as AtipArgument
    from atipkit.introspect.click import AtipCommand as AtipCommand
    from atipkit.introspect.click import AtipGroup as AtipGroup
    from atipkit.introspect.click import agent_option as agent_option
    from atipkit.introspect.click import tool_from_click as tool_from_click
    from atipkit.introspect.click import tool_from_typer as tool_from_typer

__getattr__, __dir__ = lazy_exports(__name__, __file__)
