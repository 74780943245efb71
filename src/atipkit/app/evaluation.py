"""The agent evaluation harness (PRD §16, Phase 3 item 4; §17 "parameter validity"):
record the command lines an agent runs, analyse how often their parameters are
invalid and which, and play a recorded session back.

    $ TOOL_RECORD=session.jsonl agent-run ...          # every call of TOOL is recorded
    $ python3 -m atipkit.app.evaluation analyze session.jsonl
    $ python3 -m atipkit.app.evaluation replay mytool.cli:app session.jsonl

A record is one JSON line a call: the time, app, version, command, argv, exit status,
error code, category and the parameter a usage error named, and the duration. Text
that looks like a secret (tokens, keys: the bridge's patterns) is redacted from argv
before it is written; a secret parameter's value never is on argv (`--NAME-file`).
Recording is off unless `PREFIX_RECORD` names a file.

Replay runs each recorded command line again in this process and compares the exit
status. Only commands declared read-only run unless `unsafe=True`: a recorded
`delete` must not delete again because someone is debugging.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from atipkit.app.app import App
    from atipkit.app.errors import ToolError

__all__ = ["Replayed", "analyze", "note", "record_call", "replay"]

_LAST: dict[str, Any] = {}
"""What the call being recorded ended with (`note`): the CLI runs one call at a time."""


def recording(app: App) -> Path | None:
    chosen = os.environ.get(f"{app.env_prefix}_RECORD", "").strip()
    return Path(chosen) if chosen else None


def note(tool: str, error: ToolError | None) -> None:
    """The command and error of the call in progress, for its record."""
    _LAST.clear()
    _LAST["tool"] = tool
    if error is not None:
        _LAST["code"] = str(error.code)
        _LAST["category"] = error.to_dict().get("category")
        details = error.details if isinstance(error.details, dict) else {}
        param = details.get("param") or details.get("option")  # an unknown flag: its name
        if param is not None:
            _LAST["param"] = param


def record_call(app: App, argv: Sequence[str], code: int, started: float) -> None:
    """Append the record of one call to `PREFIX_RECORD`'s file (when it names one). A
    file that cannot be written costs the call nothing: a note on stderr."""
    path = recording(app)
    if path is None:
        return
    from atipkit.bridge.result_filter import ResultFilter

    clean = ResultFilter(max_chars=None)
    entry: dict[str, Any] = {
        "app": app.name,
        "version": app.version,
        "tool": _LAST.get("tool", app.name),
        "argv": [clean(arg) for arg in argv],
        "exit_code": code,
        "ok": code == 0,
        **{k: v for k, v in _LAST.items() if k != "tool"},
        "duration_ms": round((time.perf_counter() - started) * 1000, 3),
    }
    _LAST.clear()
    from atipkit.execute.audit import AuditLog

    try:
        AuditLog(path).record(**entry)
    except OSError as exc:
        import sys

        sys.stderr.write(f"warning: the recording {path} could not be written: {exc}\n")


def read(path: str | Path) -> list[dict[str, Any]]:
    """The records of a session file; a line that is no record is skipped."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("argv"), list):
            out.append(entry)
    return out


def analyze(path: str | Path) -> dict[str, Any]:
    """Calls, failures and invalid calls (exit 2: usage and validation) per command, the
    invalid-parameter rate, and the parameters and error codes most often at fault,
    most frequent first (ties by name)."""
    entries = read(path)
    per: dict[str, dict[str, Any]] = {}
    for entry in entries:
        tool = str(entry.get("tool"))
        row = per.setdefault(tool, {"calls": 0, "failed": 0, "invalid": 0, "_params": Counter()})
        row["calls"] += 1
        row["failed"] += not entry.get("ok")
        if entry.get("exit_code") == 2:
            row["invalid"] += 1
            if entry.get("param"):
                row["_params"][str(entry["param"])] += 1
    commands = {}
    for tool in sorted(per):
        row = per[tool]
        params: Counter[str] = row.pop("_params")
        row["invalid_rate"] = round(row["invalid"] / row["calls"], 4)
        row["invalid_params"] = dict(sorted(params.items(), key=lambda kv: (-kv[1], kv[0])))
        commands[tool] = row
    invalid = sum(r["invalid"] for r in commands.values())
    codes = Counter(str(e["code"]) for e in entries if e.get("code"))
    return {
        "calls": len(entries),
        "invalid": invalid,
        "invalid_rate": round(invalid / len(entries), 4) if entries else 0.0,
        "error_codes": dict(sorted(codes.items(), key=lambda kv: (-kv[1], kv[0]))),
        "commands": commands,
    }


class Replayed(NamedTuple):
    argv: list[str]
    recorded: int
    now: int | None
    """None: not run (`skipped` says why)."""
    skipped: str | None = None

    @property
    def same(self) -> bool:
        return self.now is None or self.now == self.recorded


def replay(app: App, path: str | Path, *, unsafe: bool = False) -> list[Replayed]:
    """Run each of `app`'s recorded calls again, in order, and compare exit statuses.
    Nothing is recorded while replaying, and nothing prompts."""
    import contextlib
    import io

    from atipkit.app.annotations import ReadOnly

    out = []
    saved = {k: os.environ.pop(k, None) for k in (f"{app.env_prefix}_RECORD",)}
    os.environ[f"{app.env_prefix}_NO_INPUT"] = "1"
    try:
        for entry in read(path):
            if entry.get("app") != app.name:
                continue
            argv = [str(a) for a in entry["argv"]]
            recorded = int(entry.get("exit_code", 0))
            spec = _command(app, argv)
            if spec is not None and not unsafe and not spec.annotations & ReadOnly:
                out.append(Replayed(argv, recorded, None, "not read-only (unsafe=True runs it)"))
                continue
            sink = io.StringIO()
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(io.StringIO()):
                now = app.main(argv)
            out.append(Replayed(argv, recorded, now))
    finally:
        os.environ.pop(f"{app.env_prefix}_NO_INPUT", None)
        for key, value in saved.items():
            if value is not None:
                os.environ[key] = value
    return out


def _command(app: App, argv: list[str]) -> Any:
    """The command `argv` names (its leading words), or None (a usage error, `--agent`)."""
    from atipkit.app.app import Group
    from atipkit.app.command import CommandSpec

    node: Any = app
    for word in argv:
        if not isinstance(node, Group) or word.startswith("-"):
            break
        child = node.child(word)
        if child is None:
            break
        node = child
    return node if isinstance(node, CommandSpec) else None


def main(argv: Sequence[str] | None = None) -> int:
    """`python3 -m atipkit.app.evaluation analyze FILE | replay MODULE:APP FILE [--unsafe]`."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 2 and args[0] == "analyze":
        print(json.dumps(analyze(args[1]), indent=2))
        return 0
    if len(args) in (3, 4) and args[0] == "replay" and args[3:] in ([], ["--unsafe"]):
        import importlib

        from atipkit.app.app import App

        module, _, attribute = args[1].partition(":")
        app = getattr(importlib.import_module(module), attribute or "app")
        if not isinstance(app, App):
            sys.stderr.write(f"{args[1]} is no atipkit.app.App\n")
            return 2
        results = replay(app, args[2], unsafe=bool(args[3:]))
        for r in results:
            status = r.skipped or ("same" if r.same else f"was {r.recorded}, now {r.now}")
            print(f"{' '.join(r.argv)}\t{status}")
        return 0 if all(r.same for r in results) else 1
    sys.stderr.write(main.__doc__.strip().strip("`") + "\n" if main.__doc__ else "usage\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
