"""Compiling a 300-command document to every provider format, in-process.

    python bench/compile.py [--runs N] [--json]

Medians in milliseconds, from one run side by side: each provider format alone with
`compile_tools` (strict and not where it applies), the provider-independent flattening
step, and the five formats of the issue (OpenAI Chat Completions, OpenAI Responses,
Anthropic, Gemini, MCP) both as five one-shot compiles and from one `Compiler`, which
flattens once. Target (issue 3): the five together < 50 ms.
"""

from __future__ import annotations

import argparse
import json
import platform

import atipkit
from _synth import median_ms, synthesize
from atipkit.bridge import Compiler, compile_tools
from atipkit.bridge.flatten import flatten

TARGET_MS = 50.0
FIVE = ["openai", "openai-responses", "anthropic", "gemini", "mcp"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    args = parser.parse_args()

    tool = atipkit.from_dict(synthesize())
    tools = compile_tools(tool, "openai").tools
    figures: dict[str, float] = {
        "flatten (shared by every format)": median_ms(lambda: flatten([tool]), args.runs),
    }
    for provider in [*FIVE, "gemini-json-schema"]:
        figures[provider] = median_ms(lambda p=provider: compile_tools(tool, p), args.runs)
    for provider in ("openai", "anthropic"):
        figures[f"{provider} strict"] = median_ms(
            lambda p=provider: compile_tools(tool, p, strict=True), args.runs
        )
    figures["all five, one compile_tools each"] = median_ms(
        lambda: [compile_tools(tool, p) for p in FIVE], args.runs
    )

    def five_from_one_compiler() -> None:
        compiler = Compiler(tool)
        for provider in FIVE:
            compiler.compile(provider)

    figures["all five formats (one Compiler)"] = median_ms(five_from_one_compiler, args.runs)

    if args.json:
        print(
            json.dumps(
                {"tools": len(tools), "figures_ms": figures, "python": platform.python_version()},
                indent=2,
            )
        )
        return
    print(
        f"document: {atipkit.count_commands(tool)} commands → {len(tools)} tools; "
        f"Python {platform.python_version()}"
    )
    for label, value in figures.items():
        verdict = ""
        if label.startswith("all five formats"):
            verdict = f"< {TARGET_MS:g} " + ("ok" if value < TARGET_MS else "OVER TARGET")
        print(f"{label:38} {value:8.2f} ms  {verdict}")


if __name__ == "__main__":
    main()
