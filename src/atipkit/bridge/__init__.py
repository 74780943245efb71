"""Translating ATIP tools for models and back (RFC 0.6 §7-8, Appendix A).

compiled = compile_tools(tool, "anthropic", strict=True)
response = client.messages.create(..., tools=compiled.payload())
for call in parse_tool_calls("anthropic", response, compiled): ...

With hundreds of commands, `deferred_tools(compiled, tools)` defines them all but loads
none until a search finds them (OpenAI Responses namespaces, Anthropic `defer_loading`).
"""

from atipkit.bridge.calls import (
    ToolCall,
    parse_tool_calls,
    tool_result_message,
    tool_result_messages,
)
from atipkit.bridge.compile import PROVIDERS, Compiled, Compiler, Provider, compile_tools
from atipkit.bridge.deferred import (
    DEFERRED_PROVIDERS,
    SEARCH_TOOL,
    anthropic_search_result,
    deferred_tools,
)
from atipkit.bridge.flatten import Binding, FlatTool, ParamRef, Strategy, Target
from atipkit.bridge.prompt import safety_prompt
from atipkit.bridge.result_filter import Filtered, ResultFilter
from atipkit.bridge.validator import Validator

__all__ = [
    "DEFERRED_PROVIDERS",
    "PROVIDERS",
    "SEARCH_TOOL",
    "Binding",
    "Compiled",
    "Compiler",
    "Filtered",
    "FlatTool",
    "ParamRef",
    "Provider",
    "ResultFilter",
    "Strategy",
    "Target",
    "ToolCall",
    "Validator",
    "anthropic_search_result",
    "compile_tools",
    "deferred_tools",
    "parse_tool_calls",
    "safety_prompt",
    "tool_result_message",
    "tool_result_messages",
]
