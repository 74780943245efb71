"""One version of the gateway's tool list: the tools compiled for MCP, the name table
back to their commands, search over them, and the executor that runs their calls."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from atipkit.serve import deferred as deferring

if TYPE_CHECKING:
    from atipkit.bridge.calls import ToolCall
    from atipkit.bridge.result_filter import ResultFilter
    from atipkit.execute.audit import AuditLog
    from atipkit.execute.executor import Executor, Outcome
    from atipkit.policy import Decision, Policy
    from atipkit.search import CommandIndex
    from atipkit.serve.gateway.selection import Loaded

Ask = Callable[["ToolCall", "Decision"], bool]
RUN_INPUT = deferring.run_schema()
"""`run_tool`'s input here: a name and its arguments (calls take no flags)."""
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"error": {"type": "string"}},
    "required": ["error"],
}
"""A call the gateway refused or failed to complete: `{"error", ...details}`."""


def answers(schema: dict[str, Any]) -> dict[str, Any]:
    """The `outputSchema` of a gateway tool whose answers are `schema`, or an error
    (`ERROR_SCHEMA`): every `structuredContent` the gateway gives, an error's included,
    is one of the two."""
    return {"type": "object", "anyOf": [schema, ERROR_SCHEMA]}


def call_output() -> dict[str, Any]:
    """The `outputSchema` of a tool that runs a command: the executor's report."""
    from atipkit.execute.report import REPORT_SCHEMA

    return answers(REPORT_SCHEMA)


class GatewayCatalog:
    """The tools of one `Loaded`: their MCP definitions, the name table back to commands,
    search, and the executor that runs calls. Immutable once built: a change of the
    registry builds a new one, and calls in progress finish with the one they began in."""

    def __init__(
        self,
        loaded: Loaded,
        *,
        policy: Policy | None = None,
        result_filter: ResultFilter | None = None,
        audit: AuditLog | None = None,
        version: int = 0,
        billable_used: int = 0,
    ) -> None:
        from atipkit.bridge import compile_tools

        self.version = version
        self.loaded = loaded
        self.compiled = compile_tools(loaded.tools, "mcp", sources=loaded.sources or None)
        output = call_output()
        self.definitions = {d["name"]: {**d, "outputSchema": output} for d in self.compiled.tools}
        self.names = list(self.definitions)
        self._asker = threading.local()
        self._settings = (policy, result_filter, audit, billable_used)
        self._executor: Executor | None = None
        self._lock = threading.Lock()

    @property
    def executor(self) -> Executor:
        """The executor of this catalog's calls, built at the first that needs it: a
        stdio client's first answers come before the executor's modules are imported."""
        with self._lock:
            if self._executor is None:
                self._executor = self._new_executor()
            return self._executor

    def _new_executor(self) -> Executor:
        from atipkit.execute import Executor
        from atipkit.interop.callers import remote_callers

        policy, result_filter, audit, billable_used = self._settings
        loaded = self.loaded
        return Executor(
            loaded.tools,
            policy=policy,
            result_filter=result_filter,
            executables=loaded.executables,
            evidence=loaded.evidence,
            audit=audit,
            confirm=self._confirm,
            billable_used=billable_used,
            remote=remote_callers(loaded.tools),  # MCP servers' tools are called there
        )

    @functools.cached_property
    def deferred(self) -> list[dict[str, Any]]:
        """The three tools of deferred mode over this catalog (`atipkit.serve.deferred`)."""
        from atipkit.bridge.safety import combine

        tools = sorted({t.name for t in self.loaded.tools})
        shown = ", ".join(tools[:8]) + (f" and {len(tools) - 8} more" if len(tools) > 8 else "")
        return deferring.definitions(
            searched=f"commands of {shown or 'no tools'}",
            search_title="Search the command-line tools",
            run_title="Run a command",
            count=len(self.names),
            effects=combine([flat.effects for flat in self.compiled.flat]),
            run_input=RUN_INPUT,
            search_words="their names, parameters or examples",
            outputs={
                deferring.SEARCH_TOOL: answers(deferring.SEARCH_RESULT_SCHEMA),
                deferring.SCHEMA_TOOL: answers({"type": "object", "required": ["inputSchema"]}),
                deferring.RUN_TOOL: call_output(),
            },
        )

    @property
    def warnings(self) -> list[str]:
        return [
            f"{w.location}: {w.message}" if w.location else w.message
            for w in self.compiled.warnings
        ]

    @functools.cached_property
    def sdk_tools(self) -> list[Any]:
        """The SDK's `Tool` of each definition, validated once: lists are asked for often."""
        import mcp.types as types

        return [types.Tool.model_validate(d) for d in self.definitions.values()]

    @functools.cached_property
    def sdk_deferred(self) -> list[Any]:
        """The SDK's `Tool` of each of the deferred three."""
        import mcp.types as types

        return [types.Tool.model_validate(d) for d in self.deferred]

    # Search ---------------------------------------------------------------------------

    @functools.cached_property
    def index(self) -> CommandIndex:
        """BM25 over the commands of this catalog's tools, as `atip search` ranks a
        machine's (`atipkit.search.CommandIndex`: names, descriptions, parameters,
        examples, patterns). Built once a catalog; the gateway builds it before serving
        in deferred mode, so no search waits for it."""
        from atipkit.search import CommandIndex

        return CommandIndex.from_tools(self.loaded.tools)

    @functools.cached_property
    def _by_command(self) -> dict[tuple[str, str], str]:
        """(tool, command path space-joined, as a hit gives it) → the command's name in
        this catalog."""
        from atipkit.bridge.deferred import command_names

        return command_names(self.compiled)

    def search(self, query: str, limit: int = deferring.SEARCH_LIMIT) -> list[dict[str, Any]]:
        """The tools sharing words with `query`, best first (ties by name): name, title,
        description and hints of each, not the schema (`get_tool_schema` gives that)."""
        out = []
        for hit in self.index.search(query, limit, rerank=False):  # words, as documented
            name = self._by_command.get((hit.tool, hit.command))
            if name is None:  # not a tool of the compile; both follow flatten.invocable
                continue
            definition = self.definitions[name]
            out.append(
                {key: definition[key] for key in ("name", "title", "description", "annotations")}
            )
        return out

    def definition_of(self, name: str) -> dict[str, Any] | None:
        return self.definitions.get(name)

    def command_names(self) -> Iterable[str]:
        return self.names

    # Calls ----------------------------------------------------------------------------

    def call(self, name: str, arguments: dict[str, Any], ask: Ask | None = None) -> Outcome:
        """Run tool `name` with `arguments` (blocking: call it from a worker thread).
        `ask` is asked about what the policy wants confirmed; without it, such calls are
        denied."""
        from atipkit.bridge import parse_tool_calls

        [call] = parse_tool_calls("mcp", {"name": name, "arguments": arguments}, self.compiled)
        self._asker.value = ask
        try:
            outcome = self.executor.execute(call)
        finally:
            self._asker.value = None
        return outcome

    def _confirm(self, call: ToolCall, decision: Decision) -> bool:
        ask: Ask | None = getattr(self._asker, "value", None)
        return ask is not None and ask(call, decision)
