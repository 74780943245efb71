"""Running tool calls safely: argv, policy, runner (RFC 0.6 §6, §10, §11)."""

from atipkit.execute.argv import ArgumentProblem, InvalidArguments, Invocation, build_argv

__all__ = ["ArgumentProblem", "InvalidArguments", "Invocation", "build_argv"]
