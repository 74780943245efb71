"""A complete agent loop on top of atipkit, with the OpenAI or the Anthropic SDK.

    python examples/agent_loop.py --provider anthropic --tool deploy "Is web on staging?"
    python examples/agent_loop.py --provider openai --tool gh --yes "List my open PRs"

It needs `pip install openai` or `pip install anthropic` and OPENAI_API_KEY or
ANTHROPIC_API_KEY. Every turn: compile the tools (safety flags in their descriptions and a
safety summary in the system prompt), let the model call them, map each call back to its
command, decide under the policy (destructive commands are confirmed on the terminal, or
with --yes), run it without a shell, filter the output, and hand it back.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from atipkit import (
    Decision,
    Executor,
    Outcome,
    Policy,
    Tool,
    ToolCall,
    compile_tools,
    parse_tool_calls,
    resolve_tool,
    safety_prompt,
    tool_result_messages,
)

SYSTEM = (
    "You operate command-line tools for the user. Prefer read-only commands; explain what you did."
)


def run_agent(
    task: str,
    *,
    provider: str,
    client: Any,
    tools: list[Tool],
    executor: Executor,
    model: str,
    max_turns: int = 8,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> str:
    """Run `task` to the model's final answer; returns that answer."""
    compiled = compile_tools(tools, "anthropic" if provider == "anthropic" else "openai")
    system = "\n\n".join(p for p in (SYSTEM, safety_prompt(compiled.flat)) if p)
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    if provider != "anthropic":
        messages.insert(0, {"role": "system", "content": system})
    for _ in range(max_turns):
        if provider == "anthropic":
            response = client.messages.create(
                model=model,
                max_tokens=2048,
                system=system,
                tools=compiled.payload(),
                messages=messages,
            )
            calls = parse_tool_calls("anthropic", response, compiled)
            if not calls:
                return "".join(b.text for b in response.content if b.type == "text")
            messages.append(
                {
                    "role": "assistant",
                    "content": [b.model_dump(exclude_none=True) for b in response.content],
                }
            )
        else:
            response = client.chat.completions.create(
                model=model, messages=messages, tools=compiled.payload()
            )
            message = response.choices[0].message
            calls = parse_tool_calls("openai", response, compiled)
            if not calls:
                return message.content or ""
            messages.append(message.model_dump(exclude_none=True))
        outcomes = executor.execute_all(calls)
        for outcome in outcomes:
            if on_outcome:
                on_outcome(outcome)
        results = [(o.call, o.text, o.is_error) for o in outcomes]
        messages += tool_result_messages(
            "anthropic" if provider == "anthropic" else "openai", results
        )
    return "(stopped: too many turns)"


def ask_on_terminal(call: ToolCall, decision: Decision) -> bool:
    """Confirmation by a person, on the terminal that started the agent."""
    if not sys.stdin.isatty():
        return False
    reasons = "; ".join(decision.reasons)
    answer = input(f"Run {' '.join((call.tool or '', *(call.path or ())))}? ({reasons}) [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("task")
    parser.add_argument("--provider", choices=["openai", "anthropic"], default="anthropic")
    parser.add_argument("--model", help="default: a current model of the provider")
    parser.add_argument(
        "--tool",
        action="append",
        required=True,
        help="a tool name on PATH, or an ATIP document (repeatable)",
    )
    parser.add_argument("--yes", action="store_true", help="confirm what needs confirming")
    args = parser.parse_args()

    tools, executables = [], {}
    for name in args.tool:
        resolved = resolve_tool(name)
        tools.append(resolved.tool)
        if resolved.path:
            executables[resolved.tool.name] = resolved.path
    executor = Executor(
        tools,
        policy=Policy(),
        executables=executables,
        confirm=(lambda *_: True) if args.yes else ask_on_terminal,
    )
    client: Any  # the provider's SDK client: run_agent calls what both have
    if args.provider == "anthropic":
        import anthropic

        client, model = anthropic.Anthropic(), args.model or "claude-sonnet-4-5"
    else:
        import openai

        client, model = openai.OpenAI(), args.model or "gpt-4.1"

    def show(outcome: Outcome) -> None:
        argv = outcome.invocation.argv if outcome.invocation else []
        print(f"[{outcome.decision.action}] {' '.join(argv)}", file=sys.stderr)

    print(
        run_agent(
            args.task,
            provider=args.provider,
            client=client,
            tools=tools,
            executor=executor,
            model=model,
            on_outcome=show,
        )
    )


if __name__ == "__main__":
    main()
