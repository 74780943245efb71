"""Inferred metadata: help texts from real programs (argparse, Click and Typer programs
written here, real GNU tools) and the layouts of parsers whose toolchains are not here."""

from __future__ import annotations

import shutil
import sys
import textwrap
import time
from pathlib import Path

import pytest

import atipkit
from atipkit.infer.generate import generate_shim
from atipkit.infer.helptext import option_type, parse_help
from tests.helpers import BUSY


def program(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(source))
    path.chmod(0o755)
    return path


def opts(command: atipkit.Command) -> dict[str, atipkit.Option]:
    return {o.name: o for o in command.options}


def test_an_argparse_program(tmp_path):
    exe = program(
        tmp_path,
        "shipit",
        """
        import argparse
        p = argparse.ArgumentParser(description="Ship packages to a server.",
                                    formatter_class=argparse.ArgumentDefaultsHelpFormatter)
        p.add_argument("-v", "--verbose", action="store_true", help="say more")
        p.add_argument("--retries", type=int, default=3, metavar="N", help="tries")
        p.add_argument("-o", "--output", metavar="FILE", help="write the log to FILE")
        p.add_argument("--mode", choices=["fast", "safe"], default="safe", help="how")
        p.add_argument("package", help="what to ship")
        p.add_argument("extra", nargs="*", help="more packages")
        p.parse_args()
    """,
    )
    tool = generate_shim(str(exe), man=False)
    assert atipkit.validate(atipkit.dumps(tool)).ok
    root = tool.commands[""]
    assert tool.description == "Ship packages to a server."
    options = opts(root)
    assert options["verbose"].flags == ["-v", "--verbose"]
    assert options["verbose"].type == "boolean"
    assert (options["retries"].type, options["retries"].default) == ("integer", 3)
    assert options["output"].type == "file"
    assert (options["mode"].type, options["mode"].enum, options["mode"].default) == (
        "enum",
        ["fast", "safe"],
        "safe",
    )
    assert [(a.name, a.required, a.variadic) for a in root.arguments] == [
        ("package", True, False),
        ("extra", False, True),
    ]
    assert tool.trust.source == "inferred"
    assert tool.extensions["_generation"]["method"] == "help-parsing"


def test_an_argparse_program_with_subcommands(tmp_path):
    exe = program(
        tmp_path,
        "vault",
        """
        import argparse
        p = argparse.ArgumentParser(description="Keep secrets.")
        p.add_argument("--profile", help="profile to use")
        sub = p.add_subparsers(dest="cmd")
        put = sub.add_parser("put", help="store a secret")
        put.add_argument("key")
        put.add_argument("--ttl", type=int, metavar="SECONDS", help="expiry")
        rm = sub.add_parser("delete", help="delete a secret forever")
        rm.add_argument("key")
        p.parse_args()
    """,
    )
    tool = generate_shim(str(exe), man=False)
    assert list(tool.commands) == ["put", "delete"]
    assert [o.name for o in tool.global_options] == ["help", "profile"]  # as documented
    put = tool.commands["put"]
    assert opts(put)["ttl"].type == "integer"
    assert [a.name for a in put.arguments] == ["key"]
    assert tool.commands["delete"].effects.destructive is True  # from its name
    assert put.effects is atipkit.UNSET or put.effects.destructive is not True


def test_a_click_group(tmp_path):
    exe = program(
        tmp_path,
        "todo",
        """
        import click
        @click.group(help="Manage a todo list.")
        def cli(): pass
        @cli.command(help="Add an item.")
        @click.argument("text")
        @click.option("--priority", type=click.Choice(["low", "high"]), default="low",
                      show_default=True, help="How urgent.")
        @click.option("--due", type=click.IntRange(0, 365), help="Days left.")
        @click.option("--tag", multiple=True, help="Tags.")
        def add(text, priority, due, tag): pass
        @cli.command(help="Remove all done items.")
        @click.option("--dry-run/--no-dry-run", default=False, help="Only show.")
        def purge(dry_run): pass
        cli()
    """,
    )
    tool = generate_shim(str(exe), man=False)
    assert atipkit.validate(atipkit.dumps(tool)).ok
    assert set(tool.commands) == {"add", "purge"}
    add = opts(tool.commands["add"])
    assert (add["priority"].type, add["priority"].enum, add["priority"].default) == (
        "enum",
        ["low", "high"],
        "low",
    )
    assert add["due"].type == "integer"
    assert add["tag"].type == "string"
    assert [a.name for a in tool.commands["add"].arguments] == ["text"]
    assert opts(tool.commands["purge"])["dry-run"].type == "boolean"
    assert tool.commands["purge"].effects.destructive is True


def test_a_typer_app(tmp_path):
    pytest.importorskip("typer")
    exe = program(
        tmp_path,
        "greet",
        """
        import typer
        app = typer.Typer(help="Greet people.", add_completion=False)
        @app.command()
        def hello(name: str, count: int = typer.Option(1, help="How many times.")):
            "Say hello."
        @app.command()
        def bye(name: str):
            "Say goodbye."
        app()
    """,
    )
    tool = generate_shim(str(exe), man=False)
    assert atipkit.validate(atipkit.dumps(tool)).ok
    assert set(tool.commands) == {"hello", "bye"}
    hello = tool.commands["hello"]
    assert opts(hello)["count"].type == "integer"
    assert [a.name for a in hello.arguments] == ["name"]


@pytest.mark.parametrize("tool_name", ["ls", "grep", "tar", "curl", "git", "jq", "ps"])
def test_real_tools_give_valid_useful_shims(tool_name):
    if shutil.which(tool_name) is None:
        pytest.skip(f"{tool_name} is not installed")
    start = time.monotonic()
    tool = generate_shim(tool_name, depth=2, budget=20)
    assert time.monotonic() - start < 20 + BUSY
    report = atipkit.validate(atipkit.dumps(tool))
    assert report.ok, report.errors[:3]
    options = sum(len(c.options) for _, c in atipkit.iter_commands(tool))
    assert options + len(tool.global_options) >= 10
    assert tool.binary.hash.startswith("sha256:")


def test_gnu_details():
    if shutil.which("ls") is None or shutil.which("grep") is None:
        pytest.skip("coreutils/grep not installed")
    ls = opts(generate_shim("ls", man=False).commands[""])
    assert ls["all"].flags == ["-a", "--all"]
    assert ls["all"].type == "boolean"
    assert ls["block-size"].type == "string"  # --block-size=SIZE takes a value
    grep = generate_shim("grep", man=False).commands[""]
    assert opts(grep)["regexp"].flags == ["-e", "--regexp"]
    assert opts(grep)["file"].type == "file"
    assert [(a.name, a.required, a.variadic) for a in grep.arguments] == [
        ("patterns", True, False),
        ("file", False, True),
    ]


def test_curl_uses_its_complete_help():
    if shutil.which("curl") is None:
        pytest.skip("curl not installed")
    tool = generate_shim("curl", man=False)
    assert tool.extensions["_generation"]["sources"] == ["--help all"]
    assert len(tool.commands[""].options) > 100


def test_a_tool_whose_help_hangs_stays_within_the_budget(tmp_path):
    exe = program(tmp_path, "stuck", "import time\ntime.sleep(60)\n")
    start = time.monotonic()
    tool = generate_shim(str(exe), budget=3, man=False)
    assert time.monotonic() - start < 3 + BUSY  # not the help's 60 s
    assert atipkit.validate(atipkit.dumps(tool)).ok
    assert tool.extensions["_generation"]["confidence"] == "low"


# -- layouts of parsers whose toolchains are not on this machine ------------------------

COBRA = """Work seamlessly with GitHub from the command line.

USAGE
  gh <command> <subcommand> [flags]

CORE COMMANDS
  auth:        Authenticate gh and git with GitHub
  pr:          Manage pull requests
  repo:        Manage repositories

FLAGS
  --help      Show help for command
  --version   Show gh version
"""

COBRA_SUB = """Create a pull request on GitHub.

Usage:
  gh pr create [flags]

Flags:
  -B, --base branch         The branch into which you want your code merged
  -d, --draft               Mark pull request as a draft
  -l, --label name          Add labels by name
  -t, --title string        Title for the pull request

Global Flags:
  -R, --repo [HOST/]OWNER/REPO   Select another repository
"""

CLAP = """A fast search tool

Usage: rg [OPTIONS] <PATTERN> [PATH]...

Arguments:
  <PATTERN>  A regular expression used for searching
  [PATH]...  A file or directory to search

Options:
  -e, --regexp <PATTERN>      A pattern to search for
      --color <WHEN>          When to use color [default: auto]
                              [possible values: never, auto, always]
  -j, --threads <NUM>         The approximate number of threads to use
  -h, --help                  Print help
"""

DOCOPT_BSD = """usage: terraform [global options] <subcommand> [args]

Main commands:
  init          Prepare your working directory for other commands
  plan          Show changes required by the current configuration
  destroy       Destroy previously-created infrastructure

Global options (use these before the subcommand, if any):
  -chdir=DIR    Switch to a different working directory before executing the
                given subcommand.
  -help         Show this help output, or the help for a specified subcommand.
  -version      An alias for the "version" subcommand.
"""


def test_cobra_layout():
    top = parse_help(COBRA, "gh")
    assert [c.name for c in top.commands] == ["auth", "pr", "repo"]
    # documented help and version flags are options like any (decision 315)
    assert [o.flags for o in top.options] == [["--help"], ["--version"]]
    sub = parse_help(COBRA_SUB, "gh")
    flags = {o.name: o for o in sub.options}
    assert flags["base"].metavar == "branch"
    assert option_type(flags["draft"])[0] == "boolean"
    assert flags["repo"].metavar == "[HOST/]OWNER/REPO"


def test_clap_layout():
    parsed = parse_help(CLAP, "rg")
    flags = {o.name: o for o in parsed.options}
    assert option_type(flags["color"]) == ("enum", ["never", "auto", "always"])
    assert option_type(flags["threads"])[0] == "integer"
    assert [(a.name, a.required, a.variadic) for a in parsed.arguments] == [
        ("pattern", True, False),
        ("path", False, True),
    ]
    assert flags["help"].flags == ["-h", "--help"]


def test_docopt_and_single_dash_layout():
    parsed = parse_help(DOCOPT_BSD, "terraform")
    assert [c.name for c in parsed.commands] == ["init", "plan", "destroy"]
    flags = {o.name: o for o in parsed.options}
    assert flags["chdir"].flags == ["-chdir"]
    assert option_type(flags["chdir"])[0] == "directory"
    assert "wrapped" not in flags["chdir"].description
    assert flags["chdir"].description.endswith("given subcommand.")
    assert set(flags) == {"chdir", "help", "version"}


def test_the_man_page_fills_a_synopsis_only_help():
    import subprocess

    if shutil.which("ssh") is None or shutil.which("man") is None:
        pytest.skip("ssh or man is not installed")
    page = subprocess.run(["man", "-P", "cat", "ssh"], capture_output=True, text=True)
    if "No manual entry" in page.stderr + page.stdout or not page.stdout:
        pytest.skip("the ssh man page is not installed")
    bare = generate_shim("ssh", man=False).commands[""]
    full = generate_shim("ssh").commands[""]
    # `ssh --help` prints only a synopsis: the options it writes after `ssh`, each with
    # its value (decision 508; the cluster `[-46AaCf...]` is left out), and no more
    shown = {f for o in bare.options for f in o.flags}
    assert {"-p", "-i"} <= shown
    assert all(o.type != "boolean" for o in bare.options)
    assert len(full.options) > 20
    assert shown < {f for o in full.options for f in o.flags}


def test_atip_gen_prints_and_writes_a_valid_shim(tmp_path):
    import json

    from click.testing import CliRunner

    from atipkit.cli import cli

    exe = program(
        tmp_path,
        "mini",
        """
        import argparse
        p = argparse.ArgumentParser(description="A tiny tool.")
        p.add_argument("--level", type=int, metavar="N", help="how much")
        p.parse_args()
    """,
    )
    runner = CliRunner()
    printed = runner.invoke(cli, ["gen", str(exe), "--no-man", "--plain"])
    assert printed.exit_code == 0
    shim = atipkit.loads(printed.stdout)  # verbatim: `--plain > FILE` saves the shim
    assert opts(shim.commands[""])["level"].type == "integer"
    enveloped = runner.invoke(cli, ["gen", str(exe), "--no-man"])
    assert enveloped.exit_code == 0
    assert atipkit.from_dict(json.loads(enveloped.stdout)["result"]).binary == shim.binary
    out = tmp_path / "shims"
    written = runner.invoke(cli, ["gen", str(exe), "--no-man", "--out", str(out), "--text"])
    assert written.exit_code == 0
    [path] = list(out.iterdir())
    assert path.name == f"{shim.binary.hex}.json"
    assert atipkit.validate_file(path).ok
    assert written.stderr == f"wrote {path} (1 commands)\n"
    assert atipkit.loads(written.stdout) == atipkit.loads(path.read_bytes())
    missing = runner.invoke(cli, ["gen", "no-such-tool-here"])
    assert missing.exit_code == 10
    error = json.loads(missing.stdout)["error"]
    assert (error["code"], error["category"]) == ("E3001", "state")
    assert "no-such-tool-here" in error["message"]
    file_as_dir = runner.invoke(cli, ["gen", str(exe), "--out", str(exe)])
    assert file_as_dir.exit_code == 2
    assert json.loads(file_as_dir.stdout)["error"]["details"]["param"] == "out"


XAUTH_LIKE = """\
usage:  xauth [-options ...] [command arg ...]

where options include:
    -f authfilename                name of authority file to use
    -q                             turn off extra messages

and commands have the following syntax:

    exit                           save changes and exit program
    info                           print information about entries
    list [dpyname...]              list entries
    generate dpyname protoname [options]  use server to generate entry
    options are:
      timeout n    authorization expiration time in seconds
      trusted      clients using this entry are trusted
      untrusted    clients using this entry are untrusted

  Advanced commands:

    quit                           abort changes and exit program
"""


def test_a_list_set_below_a_command_entry_is_that_entrys():
    """xauth's help sets the words `generate` takes below it, deeper, with no blank line
    between: `trusted` is not a command (decision 557); after a blank line a list may
    start anew at another indent."""
    parsed = parse_help(XAUTH_LIKE, "xauth")
    assert [c.name for c in parsed.commands] == ["exit", "info", "list", "quit"]


def test_global_options_a_cobra_help_sends_to_its_options_command(tmp_path):
    """kubectl's `--help` lists no flag and ends "Use "kubectl options" for a list of
    global command-line options"; `kubectl options` shows each with its default,
    `--as='':`, `--insecure-skip-tls-verify=false:`: the root's options, a `false` or
    `true` default a flag taking no value (decision 561)."""
    exe = program(
        tmp_path,
        "frob",
        """
        import sys
        if sys.argv[1:] == ["options"]:
            print("The following options can be passed to any command:\\n")
            print("    --as='':\\n\\tUsername to impersonate.\\n")
            print("    --insecure-skip-tls-verify=false:\\n\\tSkip checks.\\n")
            print("    -n, --namespace='':\\n\\tThe namespace scope.\\n")
            print("    -v, --v=0:\\n\\tLog level.\\n")
        else:
            print("frob controls frobs.\\n\\nBasic Commands:")
            print("  get           Display resources\\n  delete        Delete resources\\n")
            print("Usage:\\n  frob [flags] [options]\\n")
            print('Use "frob options" for a list of global command-line options.')
        """,
    )
    tool = generate_shim(str(exe), man=False)
    assert set(tool.commands) == {"get", "delete"}
    flags = {f: o.type for o in tool.global_options for f in o.flags}
    assert flags == {
        "--as": "string",
        "--insecure-skip-tls-verify": "boolean",
        "-n": "string",
        "--namespace": "string",
        "-v": flags["-v"],
        "--v": flags["-v"],
    }
    assert flags["-v"] != "boolean"


def test_bare_alternatives_of_a_synopsis_name_commands_only_as_names():
    """`start|stop|restart unit` and `enable | disable | reenable unit` offer commands;
    a single letter among them (`a|b`, a value's letters), a placeholder or one name
    alone do not (decision 683)."""
    from atipkit.infer import synopsis

    def named(text: str) -> dict[str, str]:
        return synopsis.commands([synopsis.form(text)], ["svc"], set())

    assert named("svc [--user] start|stop|restart unit ...") == {
        "start": "unit ...",
        "stop": "unit ...",
        "restart": "unit ...",
    }
    assert list(named("svc enable | disable | reenable unit")) == ["enable", "disable", "reenable"]
    assert named("svc a|b file") == {}
    assert named("svc start|FILE unit") == {}
    assert named("svc start unit") == {}


EQUALS_LISTING = """\
supplicant_cli [-p<path>] [-i<ifname>] [-hv] [command..]
  -h = help (show this usage text)
  -v = shown version information
commands:
  status [verbose] = get current status
  note <text> = add a note to the debug log
  disconnect = disconnect and wait for a reassociate command before
    connecting
  pmksa_add <network_id> <reauth_time in seconds> = store a cache entry
  quit = exit the client
"""


def test_a_help_listing_commands_with_an_equals_sign_before_their_descriptions():
    """wpa_cli's help writes `status [verbose] = get current ... status`: each line a
    command; a description wrapped onto a line of one word (`connecting`) is no command
    (decision 763)."""
    parsed = parse_help(EQUALS_LISTING, "supplicant_cli")
    assert [c.name for c in parsed.commands] == [
        "status",
        "note",
        "disconnect",
        "pmksa_add",
        "quit",
    ]
    assert parsed.commands[0].description == "get current status"
