"""Checking tool calls against a policy before anything runs (RFC 0.6 §11.2).

Each violation is a `Problem` located at the tool name: severity error means deny,
warning means the call may run only after a person confirms it.
"""

from __future__ import annotations

from collections.abc import Iterable

from atipkit.bridge.calls import ToolCall
from atipkit.model import CommandPath, Effects, Tool, effective_effects
from atipkit.policy import COST_ORDER, TRUST_ORDER, Policy, trust_of
from atipkit.problems import Problem, error, warning


class Validator:
    """Checks calls of the given tools against `policy`."""

    def __init__(self, tools: Tool | Iterable[Tool], policy: Policy | None = None) -> None:
        batch = [tools] if isinstance(tools, Tool) else list(tools)
        self.tools = {tool.name: tool for tool in batch}
        self.policy = policy or Policy()

    def check(self, call: ToolCall) -> list[Problem]:
        """Every violation of one parsed call (an unmappable call is an unknown command)."""
        if not call.ok or call.tool is None or call.path is None:
            reason = call.error or "it does not name a command"
            return [error("policy.unknown-command", f"the call cannot run: {reason}", call.name)]
        return self.check_command(call.tool, call.path, where=call.name)

    def check_command(self, tool_name: str, path: CommandPath, *, where: str = "") -> list[Problem]:
        where = where or " ".join((tool_name, *path))
        tool = self.tools.get(tool_name)
        if tool is None:
            return [error("policy.unknown-command", f"unknown tool {tool_name!r}", where)]
        try:
            effects = effective_effects(tool, path)
        except KeyError:
            return self._omitted(tool, path, where)
        problems = self._trust(tool, where)
        problems += self._effects(effects, where)
        return problems

    def _omitted(self, tool: Tool, path: CommandPath, where: str) -> list[Problem]:
        """A command the document does not describe: what its omission means (§3.1.1)."""
        name = " ".join((tool.name, *path))
        if not tool.partial:
            return [error("policy.unknown-command", f"{tool.name} has no command {name!r}", where)]
        assumption = tool.omitted.safety_assumption if tool.omitted else "unknown"
        if assumption == "known-safe":
            return self._trust(tool, where)
        return [
            warning(
                "policy.omitted-command",
                f"{name!r} is not in the loaded metadata (omitted, safety {assumption}); confirm",
                where,
            )
        ]

    def _trust(self, tool: Tool, where: str) -> list[Problem]:
        level = trust_of(tool)
        if TRUST_ORDER.index(level) < TRUST_ORDER.index(self.policy.minimum_trust):
            return [
                error(
                    "policy.trust",
                    f"{tool.name}'s metadata is trusted {level}; the policy requires "
                    f"{self.policy.minimum_trust}",
                    where,
                )
            ]
        return []

    def _effects(self, effects: Effects, where: str) -> list[Problem]:
        policy = self.policy
        problems = []
        if effects.destructive is True and not policy.allow_destructive:
            problems.append(warning("policy.destructive", "destructive: confirm first", where))
        cost = effects.cost
        if cost and cost.billable is True and not policy.allow_billable:
            problems.append(warning("policy.billable", "may incur costs: confirm first", where))
        estimate = cost.estimate if cost else None
        if (
            policy.max_cost is not None
            and estimate in COST_ORDER
            and COST_ORDER.index(estimate) > COST_ORDER.index(policy.max_cost)
        ):
            problems.append(
                error(
                    "policy.cost",
                    f"cost estimate {estimate} is above the policy's {policy.max_cost}",
                    where,
                )
            )
        if effects.network is True and not policy.allow_network:
            problems.append(error("policy.network", "uses the network; not allowed", where))
        fs = effects.filesystem
        if fs and fs.write is True and not policy.allow_filesystem_write:
            problems.append(error("policy.filesystem-write", "writes files; not allowed", where))
        if fs and fs.delete is True and not policy.allow_filesystem_delete:
            problems.append(error("policy.filesystem-delete", "deletes files; not allowed", where))
        return problems
