"""Exact metadata from live argparse parsers and Typer apps, and `--agent` in one call
(checked the way agents will see it: by probing real programs)."""

from __future__ import annotations

import argparse
import sys
import textwrap

import pytest

import atipkit
from atipkit import Effects
from atipkit.introspect.argparse import tool_from_argparse
from atipkit.probe import probe


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="vault", description="Keep secrets.\n\nLonger text.")
    p.add_argument("--profile", default="main", help="profile to use")
    p.add_argument("--debug-internals", action="store_true", help=argparse.SUPPRESS)
    sub = p.add_subparsers(dest="cmd")
    put = sub.add_parser("put", help="store a secret", aliases=["set"])
    put.add_argument("key", help="the name")
    put.add_argument("values", nargs="+", help="one or more values")
    put.add_argument("--ttl", type=int, default=3600, help="expiry in seconds")
    put.add_argument("--tag", action="append", help="tags")
    put.add_argument("-v", "--verbose", action="count", default=0, help="more")
    fmt = put.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="as JSON")
    fmt.add_argument("--yaml", action="store_true", help="as YAML")
    get = sub.add_parser("get", help="read a secret")
    get.add_argument("key", nargs="?", help="the name")
    get.add_argument("--format", choices=["text", "json"], required=True, help="output")
    get.add_argument("--out", type=argparse.FileType("w"), help="write here")
    keys = sub.add_parser("keys", help="manage keys")
    ksub = keys.add_subparsers(dest="kcmd")
    ksub.add_parser("rotate", help="rotate the key").add_argument("--ratio", type=float)
    return p


def test_every_detail_is_exact():
    tool = tool_from_argparse(
        parser(), version="1.0", effects={"keys rotate": Effects(destructive=True)}
    )
    assert atipkit.validate(atipkit.dumps(tool)).ok
    assert tool.description == "Keep secrets."
    assert [o.name for o in tool.global_options] == ["profile"]  # suppressed one hidden
    assert tool.global_options[0].default == "main"
    assert list(tool.commands) == ["put", "get", "keys"]  # the alias is not a second command
    put = tool.commands["put"]
    assert [(a.name, a.required, a.variadic) for a in put.arguments] == [
        ("key", True, False),
        ("values", True, True),
    ]
    opts = {o.name: o for o in put.options}
    assert (opts["ttl"].type, opts["ttl"].default) == ("integer", 3600)
    assert opts["tag"].variadic
    assert opts["verbose"].type == "integer"
    assert opts["json"].exclusive == ["yaml"]
    assert opts["yaml"].exclusive == ["json"]
    get = tool.commands["get"]
    assert get.arguments[0].required is False
    gopts = {o.name: o for o in get.options}
    assert (gopts["format"].type, gopts["format"].enum, gopts["format"].required) == (
        "enum",
        ["text", "json"],
        True,
    )
    assert gopts["out"].type == "file"
    rotate = tool.commands["keys"].commands["rotate"]
    assert rotate.options[0].type == "number"
    assert atipkit.effective_effects(tool, "keys rotate").destructive is True


def script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


def test_add_agent_flag_to_an_existing_argparse_cli(tmp_path):
    exe = script(
        tmp_path,
        "shipit",
        """
        import argparse
        from atipkit import Effects
        from atipkit.introspect.argparse import add_agent_flag
        p = argparse.ArgumentParser(prog="shipit", description="Ship packages.")
        p.add_argument("package", help="what")
        add_agent_flag(p, version="2.0", effects={"": Effects(network=True)})
        args = p.parse_args()
        print("shipping", args.package)
    """,
    )
    result = probe(exe)
    assert result.ok, result.failure
    assert (result.tool.name, result.tool.version) == ("shipit", "2.0")
    assert result.tool.commands[""].effects.network is True
    assert "agent" not in [o.name for o in result.tool.commands[""].options]


def test_agent_option_for_click(tmp_path):
    exe = script(
        tmp_path,
        "todo",
        """
        import click
        from atipkit.introspect.click import agent_option
        @click.group(help="Manage todos.")
        @agent_option(version="3.1")
        def cli(): pass
        @cli.command(help="Add one.")
        @click.argument("text")
        def add(text): pass
        cli()
    """,
    )
    result = probe(exe)
    assert result.ok, result.failure
    assert (result.tool.name, result.tool.version, list(result.tool.commands)) == (
        "todo",
        "3.1",
        ["add"],
    )


def test_a_typer_app():
    typer = pytest.importorskip("typer")
    from atipkit.introspect.click import tool_from_typer

    app = typer.Typer(help="Greet people.")

    @app.command("hello")
    def say_hello(name: str, count: int = 1) -> None:
        """Say hello."""

    @app.command("bye")
    def say_bye(name: str) -> None:
        """Say goodbye."""

    tool = tool_from_typer(app, name="greet", version="0.1")
    assert atipkit.validate(atipkit.dumps(tool)).ok
    assert set(tool.commands) == {"hello", "bye"}
    hello = tool.commands["hello"]
    assert [a.name for a in hello.arguments] == ["name"]
    assert {o.name: o.type for o in hello.options}["count"] == "integer"
