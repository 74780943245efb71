"""Translating ATIP tools for models and back (RFC 0.6 §7-8, Appendix A).

compiled = compile_tools(tool, "anthropic", strict=True)
response = client.messages.create(..., tools=compiled.payload())
for call in parse_tool_calls("anthropic", response, compiled): ...
"""

from atipkit.bridge.calls import (
    ToolCall,
    parse_tool_calls,
    tool_result_message,
    tool_result_messages,
)
from atipkit.bridge.compile import PROVIDERS, Compiled, Compiler, Provider, compile_tools
from atipkit.bridge.flatten import Binding, FlatTool, ParamRef, Strategy, Target
from atipkit.bridge.result_filter import Filtered, ResultFilter
from atipkit.bridge.safety import safety_prompt
from atipkit.bridge.validator import Validator

__all__ = [
    "PROVIDERS",
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
    "compile_tools",
    "parse_tool_calls",
    "safety_prompt",
    "tool_result_message",
    "tool_result_messages",
]
