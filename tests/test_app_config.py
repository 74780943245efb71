"""Configuration precedence (PRD §8.5): flags > environment > .env > project file > user
file > system file > defaults; unknown keys and broken files are errors naming the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

APP = textwrap.dedent(
    '''
    from atipkit.app import App

    app = App("cfg", version="1")

    @app.command()
    def show(depth: int = 1, label: str = "default") -> dict:
        """Show what the settings came to."""
        return {"depth": depth, "label": label}

    sub = app.group("deep")

    @sub.command()
    def inner(size: int = 0) -> dict:
        """A nested command."""
        return {"size": size}

    app()
    '''
)


@pytest.fixture
def layout(tmp_path):
    """A project directory (with .git), a user config dir and a system config dir."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "app.py").write_text(APP)
    return {
        "project": project,
        "user": tmp_path / "config" / "cfg",
        "system": tmp_path / "etc",
        "env": {
            **{k: v for k, v in os.environ.items() if not k.startswith("CFG_")},
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "CFG_SYSTEM_CONFIG": str(tmp_path / "etc"),
        },
    }


def run(layout, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    result = subprocess.run(
        [sys.executable, str(layout["project"] / "app.py"), *args],
        capture_output=True,
        text=True,
        env={**layout["env"], **(env or {})},
        cwd=cwd or layout["project"],
        timeout=60,
    )
    return result.returncode, json.loads(result.stdout) if result.stdout.strip() else None


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def test_each_layer_beats_the_ones_below_it(layout):
    assert run(layout, "show")[1]["result"] == {"depth": 1, "label": "default"}

    write(layout["system"] / "config.toml", "[commands.show]\ndepth = 2\nlabel = 'system'\n")
    assert run(layout, "show")[1]["result"] == {"depth": 2, "label": "system"}

    write(layout["user"] / "config.yaml", "commands:\n  show:\n    depth: 3\n")
    assert run(layout, "show")[1]["result"] == {"depth": 3, "label": "system"}

    write(layout["project"] / "pyproject.toml", "[tool.cfg.commands.show]\ndepth = 4\n")
    assert run(layout, "show")[1]["result"]["depth"] == 4

    write(layout["project"] / ".cfg.toml", "[commands.show]\ndepth = 5\n")
    assert run(layout, "show")[1]["result"]["depth"] == 5

    write(layout["project"] / ".env", "# the project's settings\nCFG_SHOW_DEPTH=6\nOTHER=x\n")
    assert run(layout, "show")[1]["result"]["depth"] == 6

    assert run(layout, "show", env={"CFG_SHOW_DEPTH": "7"})[1]["result"]["depth"] == 7
    code, out = run(layout, "show", "--depth", "8", env={"CFG_SHOW_DEPTH": "7"})
    assert code == 0
    assert out["result"] == {"depth": 8, "label": "system"}


def test_the_project_root_is_found_from_a_subdirectory(layout):
    write(layout["project"] / ".cfg.toml", "[commands.show]\nlabel = 'project'\n")
    below = layout["project"] / "src" / "pkg"
    below.mkdir(parents=True)
    assert run(layout, "show", cwd=below)[1]["result"]["label"] == "project"


def test_global_settings_and_nested_commands(layout):
    write(
        layout["project"] / ".cfg.toml",
        """
        output = "plain"
        [commands."deep inner"]
        size = 9
        """,
    )
    result = subprocess.run(
        [sys.executable, str(layout["project"] / "app.py"), "deep", "inner"],
        capture_output=True,
        text=True,
        env=layout["env"],
        cwd=layout["project"],
        timeout=60,
    )
    assert result.stdout == "9\n"  # plain output of {"size": 9}
    assert run(layout, "deep", "inner", "--json")[1]["result"] == {"size": 9}


def test_dotenv_never_overrides_the_environment_and_keeps_other_keys_out(layout):
    write(layout["project"] / ".env", 'export CFG_SHOW_LABEL="from dotenv"\nHOME_SECRET=1\n')
    app = layout["project"] / "app.py"
    app.write_text(
        APP.replace(
            'return {"depth": depth, "label": label}',
            'import os\n    return {"label": label, "leak": os.environ.get("HOME_SECRET")}',
        )
    )
    assert run(layout, "show")[1]["result"] == {"label": "from dotenv", "leak": None}
    out = run(layout, "show", env={"CFG_SHOW_LABEL": "from env"})[1]
    assert out["result"]["label"] == "from env"


def test_an_unknown_key_is_an_error_naming_the_file_and_key(layout):
    write(layout["project"] / ".cfg.toml", "[commands.show]\ndepht = 3\n")
    code, out = run(layout, "show")
    assert code == 2
    assert out["error"]["code"] == "E1009"
    assert out["error"]["details"] == {
        "file": str(layout["project"] / ".cfg.toml"),
        "key": "commands.show.depht",
    }
    assert "depth" in out["error"]["suggestion"]["fix"]
    write(layout["project"] / ".cfg.toml", "yes = true\n")  # a per-call decision, never a setting
    code, out = run(layout, "show")
    assert code == 2
    assert out["error"]["details"]["key"] == "yes"


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (".cfg.toml", "depth = = 3\n", "not valid TOML"),
        (".cfg.toml", "commands = 3\n", "'commands' must map"),
        (".cfg.yaml", "- a list\n", "expected a mapping"),
        (".cfg.yaml", "a: [unclosed\n", "not valid YAML"),
        (".env", "JUST_A_WORD\n", "line 1: expected KEY=VALUE"),
    ],
)
def test_broken_files_are_errors_not_tracebacks(layout, name, text, message):
    write(layout["project"] / name, text)
    code, out = run(layout, "show", "--json")
    assert code == 2
    assert message in out["error"]["message"]
    assert out["error"]["details"]["file"] == str(layout["project"] / name)


def test_schema_reports_the_resolved_configuration(layout):
    write(layout["user"] / "config.toml", "timeout = 30\n[commands.show]\nlabel = 'user'\n")
    result = subprocess.run(
        [sys.executable, str(layout["project"] / "app.py"), "show", "--schema"],
        capture_output=True,
        text=True,
        env=layout["env"],
        cwd=layout["project"],
        timeout=60,
    )
    config = json.loads(result.stdout)["config"]
    source = str(layout["user"] / "config.toml")
    assert config == {
        "timeout": {"value": 30, "source": source},
        "label": {"value": "user", "source": source},
    }
