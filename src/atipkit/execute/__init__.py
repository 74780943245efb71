"""Running tool calls safely: argv, policy and delegation, runner, audit (RFC 0.6 §6,
§10, §11)."""

from atipkit._duration import parse_duration
from atipkit.execute.argv import ArgumentProblem, InvalidArguments, Invocation, build_argv
from atipkit.execute.audit import AuditLog
from atipkit.execute.executor import Executor, Outcome
from atipkit.execute.runner import RunRefused, RunResult, run

__all__ = [
    "ArgumentProblem",
    "AuditLog",
    "Executor",
    "InvalidArguments",
    "Invocation",
    "Outcome",
    "RunRefused",
    "RunResult",
    "build_argv",
    "parse_duration",
    "run",
]
