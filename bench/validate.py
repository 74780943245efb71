"""Validation speed, import cost and `atip --agent` start-up, measured side by side.

    python bench/validate.py [--runs N] [--json]

Figures (medians, milliseconds):
- validate: the whole pipeline (decode, schema, model, semantic checks) on a synthesized
  300-command document shaped like kubectl; then each stage alone (decode split into
  msgspec's and the nesting check's share), the probe's path (text decoded first, then
  `validate_decoded`, which walks it no more) next to `validate` of the decoded mapping
  (walked again for nesting and lone surrogates), and the reference `jsonschema` package
  on the same document for comparison (if installed).
- import: `python -c "import atipkit"` minus `python -c "pass"`, each in fresh processes,
  interleaved so machine noise hits both alike.
- agent: wall time of the `atip --agent` process, next to the bare interpreter.

Targets (issue 2): validate < 20 ms, import < 50 ms, `atip --agent` < 150 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from typing import Any

import msgspec

import atipkit
from _machine import cores, cpu
from _synth import median_ms, synthesize
from atipkit import _jsontext, checks, schema
from atipkit.model import from_dict
from atipkit.validation import validate_decoded

TARGETS_MS = {"validate": 20.0, "import": 50.0, "agent": 150.0}


def process_ms(argvs: list[list[str]], runs: int) -> list[float]:
    """Median wall time of each command, run interleaved in fresh processes.

    Bytecode caching is on, as for anyone who installed the package (some sandboxes set
    PYTHONDONTWRITEBYTECODE, which makes every start recompile atipkit's sources); one
    untimed run of each command writes the cache first."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for argv in argvs:
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    samples: list[list[float]] = [[] for _ in argvs]
    for _ in range(runs):
        for i, argv in enumerate(argvs):
            start = time.perf_counter()
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
            samples[i].append((time.perf_counter() - start) * 1000)
    return [statistics.median(s) for s in samples]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    args = parser.parse_args()

    doc = synthesize()
    text = json.dumps(doc).encode()
    data = _jsontext.decode(text)
    decoder = msgspec.json.Decoder()
    tool = from_dict(data)
    report = atipkit.validate(text)
    assert not report.problems, report.problems
    n_commands = atipkit.count_commands(tool)

    figures: dict[str, Any] = {
        "document": {"commands": n_commands, "bytes": len(text)},
        "validate": median_ms(lambda: atipkit.validate(text), args.runs),
        "stages": {
            "decode (nesting check included)": median_ms(lambda: _jsontext.decode(text), args.runs),
            "  msgspec alone": median_ms(lambda: decoder.decode(text), args.runs),
            "  nesting check alone": median_ms(lambda: _jsontext.check_depth(data), args.runs),
            "schema (jsonschema-rs)": median_ms(lambda: schema.check(data), args.runs),
            "model: loads (text, no extensions)": median_ms(lambda: atipkit.loads(text), args.runs),
            "model: from_dict (walks for extensions)": median_ms(
                lambda: from_dict(data), args.runs
            ),
            "semantic checks": median_ms(lambda: checks.check_tool(tool), args.runs),
            "dumps": median_ms(lambda: atipkit.dumps(tool), args.runs),
            "probe: decode, then validate_decoded": median_ms(
                lambda: validate_decoded(_jsontext.decode(text), raw=text), args.runs
            ),
            "validate of a mapping (walked once more)": median_ms(
                lambda: atipkit.validate(data), args.runs
            ),
        },
    }
    try:
        import jsonschema

        reference = jsonschema.Draft202012Validator(schema.load_schema("metadata"))
        figures["stages"]["schema (reference jsonschema)"] = median_ms(
            lambda: reference.is_valid(data), max(5, args.runs // 3)
        )
    except ImportError:
        pass

    py = sys.executable
    bare, imported, agent = process_ms(
        [[py, "-c", "pass"], [py, "-c", "import atipkit"], [py, "-m", "atipkit.cli", "--agent"]],
        max(10, args.runs // 2),
    )
    figures["import"] = imported - bare
    figures["import_process"] = imported
    figures["agent"] = agent
    figures["interpreter"] = bare
    figures["machine"] = {
        "python": platform.python_version(),
        "cpu": cpu(),
        "cores": cores(),
    }

    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"machine: {figures['machine']['cpu']}, {figures['machine']['cores']} cores, "
        f"Python {figures['machine']['python']}"
    )
    print(f"document: {n_commands} commands, {len(text):,} bytes")
    rows = [
        ("validate (whole pipeline)", figures["validate"], TARGETS_MS["validate"]),
        *[(f"  {k}", v, None) for k, v in figures["stages"].items()],
        ("import atipkit (over bare python)", figures["import"], TARGETS_MS["import"]),
        ("  python -c 'import atipkit' process", imported, None),
        ("atip --agent process", agent, TARGETS_MS["agent"]),
        ("  bare python process", bare, None),
    ]
    for label, value, target in rows:
        verdict = "" if target is None else ("ok" if value < target else "OVER TARGET")
        limit = f"< {target:g}" if target else ""
        print(f"{label:44} {value:8.2f} ms  {limit:>6} {verdict}")


if __name__ == "__main__":
    main()
