"""Running tool calls safely: argv, policy and delegation, runner, audit (RFC 0.6 §6,
§10, §11).

Names are loaded on first use, as atipkit's are: the MCP gateway reads the report's schema
(`atipkit.execute.report`) for its first `tools/list` without importing the executor
(decision 481)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from atipkit._exports import lazy_exports

if TYPE_CHECKING:
    from atipkit._duration import parse_duration as parse_duration
    from atipkit.execute.argv import ArgumentProblem as ArgumentProblem
    from atipkit.execute.argv import InvalidArguments as InvalidArguments
    from atipkit.execute.argv import Invocation as Invocation
    from atipkit.execute.argv import build_argv as build_argv
    from atipkit.execute.audit import AuditLog as AuditLog
    from atipkit.execute.executor import Executor as Executor
    from atipkit.execute.executor import Outcome as Outcome
    from atipkit.execute.runner import RunRefused as RunRefused
    from atipkit.execute.runner import RunResult as RunResult
    from atipkit.execute.runner import run as run


__getattr__, __dir__ = lazy_exports(__name__, __file__)
