"""Running a model's tool calls: decide, confirm, build argv, run, filter, audit.

Each call ends in an `Outcome` whose `text` goes back to the model: the filtered output,
or what went wrong (a denial and why, invalid arguments as an ATDF error, a refusal). The
calls of one turn run in parallel where their effects allow — read-only or idempotent ones
together — and calls that may write run alone, in the order the model gave them.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import msgspec

from atipkit import paths
from atipkit.bridge.calls import ToolCall
from atipkit.bridge.names import tool_keys
from atipkit.bridge.result_filter import ResultFilter
from atipkit.errors import AtipError
from atipkit.execute.argv import (
    ArgumentProblem,
    InvalidArguments,
    Invocation,
    build_argv,
    call_problems,
)
from atipkit.execute.audit import AuditLog
from atipkit.execute.remote import REMOTE_MARKS, RemoteCaller
from atipkit.execute.report import Stop
from atipkit.execute.runner import (
    IsolationUnavailable,
    RunRefused,
    RunResult,
    run,
    timeout_of,
)
from atipkit.model import Effects, Tool, effective_effects
from atipkit.policy import Decision, Evidence, Policy, TrustLevel, decide

if TYPE_CHECKING:
    from atipkit.registry.local import Entry, LocalRegistry

Confirm = Callable[[ToolCall, Decision], bool]


class Outcome(msgspec.Struct, kw_only=True):
    call: ToolCall
    decision: Decision
    invocation: Invocation | None = None
    result: RunResult | None = None
    text: str
    is_error: bool
    stopped: Stop | None = None
    """Why the command did not run, when it did not: the policy denied it, nobody confirmed
    it, its arguments do not fit, its input requirements cannot be met (`effects.
    interactive.stdin`), or it could not be started."""
    problems: list[ArgumentProblem] = []
    """What is wrong with each value, when the arguments do not fit (`invalid-arguments`);
    `text` is the same as the ATDF error the model reads."""
    request: dict[str, Any] | None = None
    """For a tool a remote caller runs (`atipkit.execute.remote`; an MCP server's, whose
    request is a `tools/call`): the request sent (or, in a dry run, that would be sent).
    `invocation.argv` is then how the remote is reached (its command line, or its URL),
    and `result` the call's: exit status 0, or 1 when the tool reported an error."""
    structured_content: Any = None
    """A remote tool's structured result, when it gave one."""

    def report(self) -> dict[str, Any]:
        """What happened, as JSON for machines: `atip run`'s result, and the gateway's
        `structuredContent`. `isolation` (what sandboxed the command), `stopped`,
        `request` and `structuredContent` appear when set."""
        call = self.call
        out: dict[str, Any] = {
            "call": {"name": call.name, "tool": call.tool, "command": list(call.path or ())},
            "decision": self.decision.action,
            "reasons": self.decision.reasons,
            "argv": self.invocation.argv if self.invocation else None,
            "exitCode": self.result.exit_code if self.result else None,
            "isError": self.is_error,
            "text": self.text,
        }
        if self.result is not None and self.result.isolation is not None:
            out["isolation"] = self.result.isolation
        if self.stopped is not None:
            out["stopped"] = self.stopped
        if self.request is not None:
            out["request"] = self.request
        if self.structured_content is not None:
            out["structuredContent"] = self.structured_content
        return out


class Executor:
    """Runs calls of `tools` under `policy`. `confirm` is asked about calls the policy
    wants confirmed (without it they are not run). `executables` and `evidence` are keyed
    by each tool's key (its name, unless an earlier tool has that name:
    `bridge.names.tool_keys`, as a compile of the same tools names it): the path to run
    (default: the evidence's path, else where `registry` recorded the tool under its key
    — the binary a scan or `get_tool` last described under that name, which must still
    have the hash recorded —, else the name found on PATH when the call comes), and
    what atipkit established about the tool (`atipkit.policy.Evidence`: where its metadata
    came from, the path and hash of the binary it describes; `resolve_tool` gives it).
    The policy sees each tool's own name. A dry run (`execute(..., dry_run=True)`) asks
    no confirmation and runs nothing: its outcome has the decision and the argv.

    Before a call runs, its binary is verified against its metadata
    (`atipkit.trust.levels.verify_tool`, with the `trust` of each policy of the chain,
    `Policy.trust_chain`: the lowest level holds), and against the hash
    it had when its metadata was read: a binary that does not match, or is gone, is
    COMPROMISED and never runs, whatever the policy. The binary run is the one verified,
    by its absolute path.

    `remote` are the callers of tools that run elsewhere (`atipkit.execute.remote`; for
    an MCP server's tools, `atipkit.interop.mcp.McpCaller()`): a tool the first of them
    claims is called through it, not run as a binary. Without one, every tool is a
    command line."""

    def __init__(
        self,
        tools: Tool | Iterable[Tool],
        *,
        policy: Policy | None = None,
        confirm: Confirm | None = None,
        audit: AuditLog | None = None,
        result_filter: ResultFilter | None = None,
        executables: Mapping[str, str] | None = None,
        credential: Callable[[], bytes | None] | None = None,
        evidence: Mapping[str, Evidence] | None = None,
        jobs: int = 4,
        billable_used: int = 0,
        registry: LocalRegistry | None = None,
        remote: Sequence[RemoteCaller] = (),
    ) -> None:
        batch = [tools] if isinstance(tools, Tool) else list(tools)
        self.tools = dict(zip(tool_keys(batch), batch, strict=True))
        self.policy = policy or Policy()
        self.confirm = confirm
        self.audit = audit
        self.filter = result_filter or ResultFilter()
        self.executables = dict(executables or {})
        self.credential = credential
        self.evidence = dict(evidence or {})
        self.jobs = jobs
        self.remote = tuple(remote)
        self._billable = billable_used
        self._lock = threading.Lock()
        self._ran = threading.local()
        self._verified: dict[tuple[Any, ...], tuple[TrustLevel | None, str]] = {}
        self._registry = registry
        self._recorded: dict[str, Entry] | None = None

    @property
    def billable_used(self) -> int:
        """Billable calls run so far under this policy: pass it on to an executor that
        takes over (the same session over new tools), so the budget is not spent twice."""
        return self._billable

    # -- one call ---------------------------------------------------------------------

    def execute(
        self, call: ToolCall, *, stdin: bytes | str | None = None, dry_run: bool = False
    ) -> Outcome:
        if not call.ok and call.tool in self.tools:
            invalid = call_problems(self.tools[call.tool], call)
            if invalid is not None:
                return self._invalid(call, Decision("deny", [str(call.error)]), invalid)
        if not call.ok or call.tool not in self.tools or call.path is None:
            reason = call.error or f"unknown tool {call.tool!r}"
            return self._finish(
                call, Decision("deny", [reason]), None, None, f"error: {reason}", True
            )
        tool = self.tools[call.tool]
        facts = self._facts(call.tool, tool)
        billable = not dry_run and _is_billable(_effects(tool, call))
        with self._lock:
            decision = decide(
                self.policy,
                tool,
                call.path,
                call.values,
                evidence=facts,
                billable_used=self._billable,
                audited=self.audit is not None,
            )
            if billable and decision.action != "deny":
                self._billable += 1  # reserved now: a call beside it sees the budget spent
        self._ran.value = False
        try:
            return self._decided(call, tool, facts, decision, stdin=stdin, dry_run=dry_run)
        finally:
            if billable and not self._ran.value:  # it never ran: the budget is given back
                with self._lock:
                    self._billable -= 1

    def _decided(
        self,
        call: ToolCall,
        tool: Tool,
        facts: Evidence,
        decision: Decision,
        *,
        stdin: bytes | str | None,
        dry_run: bool,
    ) -> Outcome:
        """The rest of `execute`, once the policy has spoken."""
        assert call.path is not None
        stop: Stop = "denied"
        # A dry run runs nothing, so nothing needs confirming: its decision stays
        # "confirm", which tells the caller that the real call will be asked about.
        if decision.action == "confirm" and not dry_run:
            if self.confirm is not None and self.confirm(call, decision):
                decision = msgspec.structs.replace(
                    decision, action="allow", reasons=[f"confirmed: {r}" for r in decision.reasons]
                )
            else:
                decision = Decision("deny", ["not confirmed: " + "; ".join(decision.reasons)])
                stop = "unconfirmed"
        if decision.action == "deny":
            text = "denied by policy: " + "; ".join(decision.reasons)
            return self._finish(call, decision, None, None, text, True, stop)
        caller = self._caller(tool)
        if caller is not None:
            if decision.isolate:  # a remote tool runs where the remote runs
                text = "not run: the policy isolates this call; a remote tool cannot be"
                return self._finish(call, decision, None, None, text, True, "not-started")
            return self._call_remote(caller, call, tool, decision, stdin=stdin, dry_run=dry_run)
        unclaimed = _remote_mark(tool)
        if unclaimed is not None:
            mark, caller_name = unclaimed
            text = (
                f"not run: {tool.name} runs elsewhere (its document has {mark}), and no remote "
                f"caller given claims it: pass remote=[{caller_name.rsplit('.', 1)[1]}()] "
                f"from {caller_name.rsplit('.', 1)[0]}"
            )
            return self._finish(call, decision, None, None, text, True, "not-started")
        try:
            invocation = build_argv(tool, call.path, call.values, executable=facts.path)
        except InvalidArguments as exc:
            return self._invalid(call, decision, exc)
        if dry_run:  # the command line, quoted as a shell reads it
            text = "dry run: " + shlex.join(invocation.argv)
            return self._finish(call, decision, invocation, None, text, False)
        effects = self._charge(tool, call)
        try:
            result = run(
                invocation,
                effects,
                stdin=stdin,
                credential=self.credential,
                isolate=decision.isolate,
            )
        except IsolationUnavailable as exc:
            text = f"not run: {exc}"
            return self._finish(call, decision, invocation, None, text, True, "not-started")
        except RunRefused as exc:
            text = f"not run: {exc}"
            return self._finish(call, decision, invocation, None, text, True, "input-refused")
        except OSError as exc:
            text = f"cannot run {invocation.argv[0]}: {exc.strerror or exc}"
            return self._finish(call, decision, invocation, None, text, True, "not-started")
        return self._finish(call, decision, invocation, result, self._text(result), not result.ok)

    def _caller(self, tool: Tool) -> RemoteCaller | None:
        """The remote caller that runs `tool`, if one claims it."""
        return next((c for c in self.remote if c.claims(tool)), None)

    def _call_remote(
        self,
        caller: RemoteCaller,
        call: ToolCall,
        tool: Tool,
        decision: Decision,
        *,
        stdin: bytes | str | None,
        dry_run: bool,
    ) -> Outcome:
        """A call of a tool that runs elsewhere: the same decision, confirmation, audit
        and result filter as a command line's, sent by its caller instead of run as argv
        (for an MCP server's tool, a `tools/call`)."""
        assert call.path is not None
        try:
            remote = caller.prepare(tool, call.path, call.values)
        except InvalidArguments as exc:
            return self._invalid(call, decision, exc)
        except AtipError as exc:
            return self._finish(call, decision, None, None, f"not run: {exc}", True, "not-started")
        sent, argv = remote.request, list(remote.argv)
        invocation = Invocation(tool=tool.name, path=call.path, argv=argv)
        if dry_run:
            text = "dry run: " + json.dumps(sent)
            return self._finish(call, decision, invocation, None, text, False, request=sent)
        if stdin is not None:
            text = "not run: a remote tool reads no stdin; give the data as an argument"
            return self._finish(
                call, decision, invocation, None, text, True, "input-refused", request=sent
            )
        effects = self._charge(tool, call)
        timeout = timeout_of(effects)
        started = time.monotonic()
        try:
            answer = remote.send(timeout=timeout)
        except TimeoutError as exc:
            result = RunResult(
                argv=argv,
                exit_code=None,
                stdout="",
                stderr=getattr(exc, "stderr", ""),
                seconds=time.monotonic() - started,
                timed_out=True,
            )
            text = self.filter(f"[timed out after {timeout:g} s]")
            return self._finish(call, decision, invocation, result, text, True, request=sent)
        except AtipError as exc:
            text = f"cannot call {remote.target}: {exc}"
            return self._finish(
                call, decision, invocation, None, text, True, "not-started", request=sent
            )
        result = RunResult(
            argv=argv,
            exit_code=1 if answer.is_error else 0,
            stdout=answer.text,
            stderr="",
            seconds=answer.seconds,
        )
        return self._finish(
            call,
            decision,
            invocation,
            result,
            self.filter(answer.text),
            answer.is_error,
            request=sent,
            structured_content=self.filter.structure(answer.structured_content),
        )

    def _facts(self, key: str, tool: Tool) -> Evidence:
        """What is known of the tool under `key`, with its binary located and verified
        now: the binary that runs is the one checked (by absolute path, not looked up
        again)."""
        facts = self.evidence.get(key) or Evidence()
        if self._caller(tool) is not None:
            return facts  # a remote, not a binary of ours to check
        path = self.executables.get(key) or facts.path
        expected = facts.hash
        if path is None and (entry := self._entry(key)) is not None:
            path, expected = entry.path, expected or entry.hash
        path = path or shutil.which(tool.name)
        if path is None:
            return facts
        level, why = self._verify(os.path.abspath(path), tool, expected)
        return msgspec.structs.replace(
            facts, path=os.path.abspath(path), hash=expected, level=level, verification=why
        )

    def _entry(self, key: str) -> Entry | None:
        """Where the registry recorded the tool `key`, read once per executor: only a key
        that is a tool name (decision 252), recorded by an absolute path (a hand-edited
        relative one would run whatever the working directory holds)."""
        from atipkit.model import is_tool_name
        from atipkit.registry.local import LocalRegistry, RegistryError

        if not is_tool_name(key):
            return None
        with self._lock:
            if self._recorded is None:
                try:
                    self._recorded = (self._registry or LocalRegistry()).read().tools
                except RegistryError:  # a damaged registry locates nothing
                    self._recorded = {}
            entry = self._recorded.get(key)
        return entry if entry is not None and os.path.isabs(entry.path) else None

    def _verify(self, path: str, tool: Tool, expected: str | None) -> tuple[TrustLevel | None, str]:
        """The binary's trust level and, below VERIFIED, why; kept while the file is
        unchanged (device, inode, size, mtime and ctime), as its digests are."""
        import stat

        from atipkit.trust.digest import file_digest
        from atipkit.trust.levels import verify_tool
        from atipkit.trust.material import Sources

        try:
            st = os.stat(path)
        except OSError as exc:
            reason = f"{path} cannot be read: {exc.strerror or exc}"
            if expected is not None:  # described, and gone: whatever comes there is not it
                return TrustLevel.COMPROMISED, f"{reason} (it is gone since it was described)"
            return None, reason
        if not stat.S_ISREG(st.st_mode):  # a FIFO put there would block the hashing
            return TrustLevel.COMPROMISED, f"{path} is not a regular file"
        state = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        key = (path, *state, id(tool), expected)
        known = self._verified.get(key)
        if known is not None:
            return known
        try:
            actual = file_digest(path)
            if expected is not None and actual != expected:
                found: tuple[TrustLevel | None, str] = (
                    TrustLevel.COMPROMISED,
                    f"{path} is {actual}, not the binary its metadata was read for ({expected})",
                )
            else:  # under each policy of the chain's trust: the lowest level holds
                sources = Sources(
                    fetch=self.policy.needs_verified_binaries() and not paths.offline_requested()
                )
                reports = [
                    verify_tool(path, tool, t, sources=sources) for t in self.policy.trust_chain()
                ]
                report = min(reports, key=lambda r: r.level)
                failed = [f"{c.name}: {c.detail}" for c in report.checks if c.ok is not True]
                found = (report.level, "; ".join(failed))
        except (AtipError, OSError, ValueError) as exc:
            found = (None, f"cannot be verified: {exc}")
        with self._lock:
            self._verified[key] = found
        return found

    def _invalid(self, call: ToolCall, decision: Decision, exc: InvalidArguments) -> Outcome:
        """Values that do not fit: the model reads the ATDF error."""
        text = json.dumps(exc.to_atdf(f"urn:atip:call:{call.id or call.index}"))
        return self._finish(
            call, decision, None, None, text, True, "invalid-arguments", problems=exc.problems
        )

    def _charge(self, tool: Tool, call: ToolCall) -> Effects:
        """The effects of a call about to run, which from here counts as run: a billable
        call keeps the share of the budget `execute` reserved for it."""
        self._ran.value = True
        return _effects(tool, call)

    def _text(self, result: RunResult) -> str:
        if result.ok:
            return self.filter(result.stdout)
        state = "timed out" if result.timed_out else f"exit status {result.exit_code}"
        parts = [f"[{state}]"]
        if result.stdout:
            parts.append(f"stdout:\n{result.stdout}")
        if result.stderr:
            parts.append(f"stderr:\n{result.stderr}")
        return self.filter("\n".join(parts))

    def _finish(
        self,
        call: ToolCall,
        decision: Decision,
        invocation: Invocation | None,
        result: RunResult | None,
        text: str,
        is_error: bool,
        stopped: Stop | None = None,
        *,
        request: dict[str, Any] | None = None,
        structured_content: Any = None,
        problems: list[ArgumentProblem] | None = None,
    ) -> Outcome:
        if self.audit is not None:
            self.audit.record(
                tool=call.tool,
                name=call.name,
                path=list(call.path or ()),
                argv=invocation.argv if invocation else None,
                decision=decision.action,
                reasons=decision.reasons,
                exit_code=result.exit_code if result else None,
                seconds=round(result.seconds, 4) if result else None,
                **({} if request is None else {"request": request}),
            )
        return Outcome(
            call=call,
            decision=decision,
            invocation=invocation,
            result=result,
            text=text,
            is_error=is_error,
            stopped=stopped,
            request=request,
            structured_content=structured_content,
            problems=problems or [],
        )

    # -- the calls of one turn --------------------------------------------------------

    def execute_all(self, calls: Sequence[ToolCall]) -> list[Outcome]:
        """All calls, outcomes in call order. Consecutive calls that change nothing
        (read-only or idempotent, not destructive) run in parallel; any other call waits
        for those before it and runs alone."""
        outcomes: list[Outcome | None] = [None] * len(calls)
        batch: list[int] = []

        def flush() -> None:
            with ThreadPoolExecutor(max_workers=self.jobs) as pool:
                for index, outcome in zip(
                    batch, pool.map(self.execute, [calls[i] for i in batch]), strict=True
                ):
                    outcomes[index] = outcome
            batch.clear()

        for index, call in enumerate(calls):
            if self._parallel_safe(call):
                batch.append(index)
                continue
            if batch:
                flush()
            outcomes[index] = self.execute(call)
        if batch:
            flush()
        return [o for o in outcomes if o is not None]

    def _parallel_safe(self, call: ToolCall) -> bool:
        if not call.ok or call.tool not in self.tools:
            return True  # it will not run
        effects = _effects(self.tools[call.tool], call)
        if effects.destructive is True:
            return False
        fs = effects.filesystem
        read_only = bool(fs and fs.write is False and fs.delete is not True)
        return read_only or effects.idempotent is True


def _remote_mark(tool: Tool) -> tuple[str, str] | None:
    """The mark by which `tool`'s document (not a shim) says it runs elsewhere, and its
    caller's name; None for a command line."""
    if tool.binary:
        return None
    return next(((m, c) for m, c in REMOTE_MARKS.items() if m in tool.extensions), None)


def _is_billable(effects: Effects) -> bool:
    return bool(effects.cost and effects.cost.billable is True)


def _effects(tool: Tool, call: ToolCall) -> Effects:
    try:
        return effective_effects(tool, call.path or ())
    except KeyError:
        return Effects()
