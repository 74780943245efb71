"""Checking tool calls against a policy before anything runs (RFC 0.6 §11.2, Appendix A
`createValidator`).

The rules are `atipkit.policy.decide`'s; this reports its findings as `Problem`s located
at the call's name: severity error means deny, warning means the call may run only after
a person confirms it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from atipkit.bridge.calls import ToolCall
from atipkit.bridge.names import tool_keys
from atipkit.model import CommandPath, Tool
from atipkit.policy import Evidence, Policy, decide
from atipkit.problems import Problem, error, warning


class Validator:
    """Checks calls of the given tools against `policy`. Tools are keyed as a compile of
    the same tools keys them (`bridge.names.tool_keys`: a tool's name, unless an earlier
    tool has it), which is what a parsed call's `tool` says; the policy sees each tool's
    own name, as the executor's does. `evidence` maps a tool's key to what atipkit
    verified about it (`atipkit.policy.Evidence`); a tool without is a document handed
    over, trusted `low` at most."""

    def __init__(
        self,
        tools: Tool | Iterable[Tool],
        policy: Policy | None = None,
        *,
        evidence: Mapping[str, Evidence] | None = None,
    ) -> None:
        batch = [tools] if isinstance(tools, Tool) else list(tools)
        self.tools = dict(zip(tool_keys(batch), batch, strict=True))
        self.policy = policy or Policy()
        self.evidence = dict(evidence or {})

    def check(self, call: ToolCall) -> list[Problem]:
        """Every violation of one parsed call (an unmappable call is an unknown command)."""
        if not call.ok or call.tool is None or call.path is None:
            reason = call.error or "it does not name a command"
            return [error("policy.unknown-command", f"the call cannot run: {reason}", call.name)]
        return self.check_command(call.tool, call.path, where=call.name, values=call.values)

    def check_command(
        self,
        tool_name: str,
        path: CommandPath,
        *,
        where: str = "",
        values: Mapping[Any, Any] | None = None,
    ) -> list[Problem]:
        where = where or " ".join((tool_name, *path))
        tool = self.tools.get(tool_name)
        if tool is None:
            return [error("policy.unknown-command", f"unknown tool {tool_name!r}", where)]
        decision = decide(self.policy, tool, path, values, evidence=self.evidence.get(tool_name))
        return [
            (error if finding.action == "deny" else warning)(finding.code, finding.message, where)
            for finding in decision.findings
        ]
