"""Exact metadata from a Click tree: every parameter kind maps to the right ATIP type."""

from __future__ import annotations

import click

import atipkit
from atipkit import Effects
from atipkit.introspect.click import AtipArgument, AtipCommand, AtipGroup, tool_from_click


@click.group(cls=AtipGroup, effects=Effects(network=True))
@click.option("--profile", envvar="DEMO_PROFILE", help="Profile to use.")
def demo():
    """Demo tool.

    Longer text that is not part of the summary."""


@demo.command(effects=Effects(destructive=True, reversible=False))
@click.argument("names", nargs=-1, required=True, cls=AtipArgument, help="What to delete")
@click.option("-f", "--force", is_flag=True, help="Do not ask.")
@click.option("--mode", type=click.Choice(["soft", "hard"]), default="soft")
@click.option("--retries", type=click.IntRange(0, 5), default=2)
@click.option("--ratio", type=float)
@click.option("--out", type=click.Path(file_okay=False))
@click.option("--tag", multiple=True)
@click.option("-v", "--verbose", count=True)
def delete(**_):
    """Delete things."""


@demo.group()
def remote():
    """Manage remotes."""


@remote.command(hidden=True)
def prune():
    """Prune remotes."""


def test_tree_types_and_effects():
    tool = tool_from_click(demo, name="demo", version="1.2")
    assert tool.description == "Demo tool."
    assert [o.name for o in tool.global_options] == ["profile"]
    assert tool.global_options[0].env_var == "DEMO_PROFILE"
    assert tool.effects == Effects(network=True)
    delete_cmd = tool.commands["delete"]
    assert isinstance(demo.commands["delete"], AtipCommand)
    assert delete_cmd.effects == Effects(destructive=True, reversible=False)
    [names] = delete_cmd.arguments
    assert (names.type, names.variadic, names.required, names.description) == (
        "string",
        True,
        True,
        "What to delete",
    )
    options = {o.name: o for o in delete_cmd.options}
    assert options["force"].type == "boolean"
    assert options["force"].flags == ["-f", "--force"]
    assert options["force"].default is atipkit.UNSET  # a false flag has no default to state
    assert (options["mode"].type, options["mode"].enum, options["mode"].default) == (
        "enum",
        ["soft", "hard"],
        "soft",
    )
    assert (options["retries"].type, options["retries"].default) == ("integer", 2)
    assert options["ratio"].type == "number"
    assert options["out"].type == "directory"
    assert options["tag"].variadic
    assert options["verbose"].type == "integer"
    assert tool.commands["remote"].commands["prune"].hidden is True


def test_effective_effects_flow_from_group_to_command():
    tool = tool_from_click(demo, name="demo", version="1.2")
    effects = atipkit.effective_effects(tool, "delete")
    assert (effects.network, effects.destructive, effects.reversible) == (True, True, False)


def test_generated_metadata_validates():
    tool = tool_from_click(demo, name="demo", version="1.2")
    report = atipkit.validate(atipkit.dumps(tool))
    assert report.ok, report.problems
    # `remote prune` says nothing about effects beyond the tool's network: a warning
    assert {p.code for p in report.warnings} <= {"effects.missing", "description.missing"}


def test_single_command_becomes_the_root_invocation():
    tool = tool_from_click(delete, name="rmx", version="1")
    assert list(tool.commands) == [""]
    assert atipkit.get_command(tool, ()).description == "Delete things."
