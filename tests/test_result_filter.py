"""The result filter (RFC 0.6 §11.3) against the secrets corpus and hostile output.

The corpus (tests/fixtures/secrets, see its README) holds secrets as commands print them
and look-alikes that must stay. Every pattern is applied to untrusted text, so each is run
on adversarial input at the runner's 4 MiB output cap: the time must stay small and grow
with the size, not with its square. And while a call's output is filtered, the gateway
keeps answering others.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp import Client

from atipkit.bridge import ResultFilter
from atipkit.bridge.secret_kinds import RULES, find, redact
from atipkit.execute.runner import MAX_OUTPUT
from tests.helpers import machine_env
from tests.servers import free_port, stop, wait_for_port

CORPUS = Path(__file__).parent / "fixtures" / "secrets"
SECRETS = [json.loads(line) for line in (CORPUS / "secrets.jsonl").read_text().splitlines()]
LOOKALIKES = [json.loads(line) for line in (CORPUS / "lookalikes.jsonl").read_text().splitlines()]


def redacted(record: dict[str, str]) -> str:
    """The record's text as it must come out: its secret replaced, all else as it was."""
    return record["text"].replace(record["secret"], f"[REDACTED:{record['kind']}]")


# -- the corpus ---------------------------------------------------------------------------


def test_the_corpus_is_what_its_generator_writes(tmp_path):
    script = CORPUS / "make_corpus.py"
    shutil.copy(script, tmp_path / script.name)
    subprocess.run([sys.executable, str(tmp_path / script.name)], check=True, capture_output=True)
    for name in ("secrets.jsonl", "lookalikes.jsonl"):
        assert (tmp_path / name).read_text() == (CORPUS / name).read_text(), name


def test_the_corpus_covers_the_kinds_the_issue_names():
    kinds = {r["kind"] for r in SECRETS}
    assert len(kinds) >= 60
    assert len(LOOKALIKES) >= len(SECRETS)
    prefixes = ("sk_live_", "rk_live_", "npm_", "pypi-", "hf_", "SG.", "dop_v1_", "shpat_")
    for prefix in prefixes:
        assert any(r["secret"].startswith(prefix) for r in SECRETS), prefix
    texts = [r["text"] for r in SECRETS]
    for needle in (
        "Authorization: Bearer",
        "Authorization: Basic",
        "PASSWORD=",
        '"password":',
        '"SecretAccessKey":',
        '"SessionToken":',
        "TWILIO_AUTH_TOKEN=",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----",
        "AccountKey=",
        '"auths"',
        "://:",  # a URL with an empty user
    ):
        assert any(needle in text for text in texts), needle
    urls = [r["secret"] for r in SECRETS if r["where"] == "url" and r["kind"] == "password"]
    assert any("/" in p for p in urls)
    assert any("@" in p for p in urls)


def test_secrets_are_redacted_naming_their_kind_and_keeping_the_rest():
    """≥ 97 % of the corpus's secrets are gone; each one that is, is replaced by a marker
    naming its kind, with the key, the quotes and the rest of the output untouched."""
    gone = [r for r in SECRETS if r["secret"] not in ResultFilter(max_chars=None)(r["text"])]
    assert len(gone) / len(SECRETS) >= 0.97, [r["kind"] for r in SECRETS if r not in gone]
    wrong = [
        (r["kind"], r["where"], ResultFilter(max_chars=None)(r["text"]))
        for r in gone
        if ResultFilter(max_chars=None)(r["text"]) != redacted(r)
    ]
    assert wrong == []


def test_lookalikes_are_left_alone():
    altered = [
        (r["what"], out)
        for r in LOOKALIKES
        if (out := ResultFilter(max_chars=None)(r["text"])) != r["text"]
    ]
    assert altered == []


def test_secrets_printed_in_a_json_string_are_redacted_too():
    """Commands print JSON (`kubectl -o json`, `docker inspect`), and an MCP tool's
    structured result is read as JSON: in a string, a line break is the escape `\\n`,
    which ends a word as the character does, and the closing quote ends a line. A token
    at the start of such a line, and the last `KEY: value` line of a YAML file in a
    string, went through."""
    token = "ghp_" + "a1B2c3" * 6
    for text, secret in (
        (f"token:\n{token}", token),
        (f"x\t{token}", token),
        ("db:\n  user: bob\n  API_KEY: 7NwptyGNeVnQwHeK", "7NwptyGNeVnQwHeK"),
    ):
        assert secret not in filtered(printed(text)), text
    nested = {"az", "terraform", "escaped-json"}  # JSON already: in a string, twice escaped
    missed = [
        (r["kind"], r["where"])
        for r in SECRETS
        if r["where"] not in nested and printed(r["secret"])[12:-2] in filtered(printed(r["text"]))
    ]
    assert missed == []
    altered = [r["what"] for r in LOOKALIKES if filtered(printed(r["text"])) != printed(r["text"])]
    assert altered == []


def printed(text: str) -> str:
    """`text` as a command printing JSON would print it."""
    return json.dumps({"stdout": text}, ensure_ascii=False)


def filtered(text: str) -> str:
    return ResultFilter(max_chars=None)(text)


def test_a_structured_result_is_cleaned_and_bounded_as_text_is():
    """Terminal escapes go from its strings (a colour code inside a token hid it from
    the rules), and one larger than `max_chars` is left out rather than sent whole."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    coloured = {"out": f"\x1b[31m{token[:10]}\x1b[0m{token[10:]}\x07"}
    assert ResultFilter().structure(coloured) == {"out": "[REDACTED:github-token]"}
    big = {"rows": ["x" * 100] * 1000}
    assert ResultFilter(max_chars=50_000).structure(big) is None
    assert ResultFilter(max_chars=None).structure(big) == big


def test_a_structured_result_is_filtered_string_by_string_and_as_json():
    """An MCP tool's structuredContent: each string is read as the text it is (a command's
    output in `{"stdout": …}`, with JSON, a key file or a `.netrc` in it), then the whole
    as JSON, for the rules that need a key; its shape stays. Read only as JSON text, 10
    of the corpus's secrets went through and 4 turned the result into a string."""
    filt = ResultFilter(max_chars=None)
    wrong = [
        (r["kind"], r["where"])
        for r in SECRETS
        if filt.structure({"stdout": r["text"], "code": 0}) != {"stdout": redacted(r), "code": 0}
    ]
    assert wrong == []
    assert [r["what"] for r in LOOKALIKES if filt.structure([r["text"]]) != [r["text"]]] == []
    # a key names the secret; a key block given line by line is redacted in each line
    lines = [
        "-----BEGIN PRIVATE KEY-----",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
        "-----END PRIVATE KEY-----",
    ]
    assert filt.structure({"token": "abcdef123456", "key": lines, "n": [1.5, None, True]}) == {
        "token": "[REDACTED:token]",
        "key": ["[REDACTED:private-key]"] * 3,
        "n": [1.5, None, True],
    }


def test_the_count_is_of_secrets_and_overlapping_finds_are_one():
    text = "\n".join(r["text"] for r in SECRETS[:40])
    out = ResultFilter(max_chars=None).apply(text)
    assert out.redactions == 40 == out.text.count("[REDACTED:")
    # a token in a password's place is one secret, named by the more telling kind
    token = "ghp_" + "a1B2c3" * 6
    assert redact(f"password={token}") == ("password=[REDACTED:github-token]", 1)
    assert redact(f"Authorization: Bearer {token}") == (
        "Authorization: Bearer [REDACTED:github-token]",
        1,
    )


def test_markers_are_never_redacted_again():
    """Filtering filtered output changes nothing: no row finds a secret in a marker."""
    for kind in {rule.kind for rule in RULES}:
        marker = f"[REDACTED:{kind}]"
        for text in (
            marker,
            f"PASSWORD={marker}",
            f'{{"token": "{marker}"}}',
            f"secret: {marker}",
            f"https://u:{marker}@host/x",
            f"Authorization: Bearer {marker}",
        ):
            assert redact(text) == (text, 0), text


def test_positions_hold_where_lowering_changes_the_length():
    """Keys are matched case-insensitively on lowered text; `İ` lowers to two characters,
    and the positions must still be the text's own."""
    text = "İİİ PASSWORD=hunter2 İ token: abcdef123456"
    assert redact(text) == ("İİİ PASSWORD=[REDACTED:password] İ token: [REDACTED:token]", 2)
    assert [kind for _s, _e, kind in find(text)] == ["password", "token"]


def test_surrounding_output_is_kept_readable():
    assert ResultFilter()('{"password": "s3cr\\"et", "user": "bob"}') == (
        '{"password": "[REDACTED:password]", "user": "bob"}'
    )
    assert ResultFilter()("curl -u bob:s3cret https://x") == (
        "curl -u bob:[REDACTED:basic-auth] https://x"
    )
    # a password holding `@` or `/`: the host follows the last `@` before the path
    for password in ("p@ss", "pa/ss", "p@ss@w0rd", "p/a/ss"):
        assert ResultFilter()(f"https://u:{password}@host/x@y") == (
            "https://u:[REDACTED:password]@host/x@y"
        )


# -- linear time on hostile output --------------------------------------------------------

# each repeated to the runner's 4 MiB cap: prefixes that almost match, runs a pattern could
# rescan, unterminated blocks and quotes, separators without values, dense matches
ADVERSARIAL = {
    "a.a.a.": "a.",
    "x://x: repeated": "x://x:",
    "word characters": "a",
    "-----BEGIN without END": "-----BEGIN ",
    "private key without END": "-----BEGIN PRIVATE KEY-----\n",
    "eyJ repeated": "eyJ",
    "JWT segments": "eyJaaaaaaaaaa.",
    "sk- repeated": "sk-",
    "password= repeated": "password=",
    "password: repeated": "password:",
    'token=" unclosed': 'token="',
    "Authorization: Bearer repeated": "Authorization: Bearer ",
    "URL user without host": "://u:",
    "URL with @ runs": "https://u:p@",
    "gated kinds": "abc1Q~0123456789abcdef0123456789abcdef-us12345678:AA",
    # a placeholder after a key, the next key inside it: a value scanned before it was
    # found to be a placeholder was scanned again from each key (8 s at 4 MiB)
    "Authorization:${ repeated": "authorization:${",
    "_pwd=${ repeated": "_pwd=${",
    "token=a.b( repeated": "token=a.b(",
    "terminal escapes": "\x1b[\x1b]",
    "control characters": "\x00a\r",
}


def seconds(function: Callable[[], object]) -> float:
    """CPU seconds of the fastest of two runs: the filter is single-threaded, and the
    machine's other load does not count against it."""
    best = float("inf")
    for _ in range(2):
        start = time.process_time()
        function()
        best = min(best, time.process_time() - start)
    return best


@functools.cache
def ordinary() -> float:
    """CPU seconds of filtering 4 MiB of ordinary log lines, on this machine."""
    line = "2024-05-02T10:11:12Z INFO GET /api/v1/items?page=2 200 12ms\n"
    return seconds(lambda: ResultFilter().apply(repeat(line)(MAX_OUTPUT)))


def check_linear(text_of: Callable[[int], str]) -> None:
    """Filtering 64 KiB takes well under a second (the quadratic filter took 27 s on
    `a.a.a.`), 4 MiB a few seconds at most and a few times what 4 MiB of ordinary output
    does (a text that each of many starts scans far is linear, but no cheaper for it),
    and 4 MiB about four times what 1 MiB does."""
    filt = ResultFilter()
    small = seconds(lambda: filt.apply(text_of(64 * 1024)))
    assert small < 1.0
    one = seconds(lambda: filt.apply(text_of(MAX_OUTPUT // 4)))
    four = seconds(lambda: filt.apply(text_of(MAX_OUTPUT)))
    assert four < 5.0
    assert four < 6 * ordinary(), (four, ordinary())  # at most ~3.5 today
    assert four < 8 * max(one, 0.01), (one, four)  # 16 if it were quadratic


def repeat(unit: str) -> Callable[[int], str]:
    return lambda size: (unit * (size // len(unit) + 1))[:size]


@pytest.mark.parametrize("unit", ADVERSARIAL.values(), ids=ADVERSARIAL)
def test_adversarial_output_is_filtered_in_linear_time(unit):
    check_linear(repeat(unit))


@pytest.mark.parametrize("cut", ["prefix", "all but the last character", "the whole"])
def test_every_row_is_linear_on_near_misses_of_its_own_secrets(cut):
    """Each corpus text, with its secret cut short, repeated (a mixture of every row's
    near misses: a row that rescanned would dominate the time and grow with its square);
    "the whole" repeats the corpus itself, a dense output of real matches."""

    def near_miss(record: dict[str, str]) -> str:
        secret = record["secret"]
        part = {"prefix": secret[:4], "all but the last character": secret[:-1]}.get(cut, secret)
        return record["text"].replace(secret, part)

    check_linear(repeat("\n".join(near_miss(r) for r in SECRETS)))


# -- the gateway keeps answering ----------------------------------------------------------

FLOOD = """#!/usr/bin/env python3
import json, sys
if "--agent" in sys.argv:
    print(json.dumps({"atip": {"version": "0.6"}, "name": "flood", "version": "1.0.0",
        "description": "Print a lot", "trust": {"source": "native", "verified": False},
        "commands": {"out": {"description": "Print 4 MiB of URL-like text",
            "effects": {"network": False, "idempotent": True,
                        "filesystem": {"write": False}}}}}))
    sys.exit(0)
sys.stdout.write(("https://u:p@h " * 100_000 + "authorization:${" * 65_536 + "x://x:" * 200_000
                  + "a." * 1_000_000)[:4194304])
"""


def test_a_slow_call_does_not_stall_the_gateway(tmp_path):
    """While one client's call filters 4 MiB of hostile output, another client's
    tools/list is answered at once (the filter once held the interpreter for minutes, and
    a concurrent tools/list waited 12 s), and the call itself ends in seconds."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "flood").write_text(FLOOD)
    (bin_dir / "flood").chmod(0o755)
    env = machine_env(tmp_path, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    atip = [sys.executable, "-m", "atipkit.cli"]
    subprocess.run(
        [*atip, "scan", "--path", str(bin_dir)], env=env, check=True, capture_output=True
    )
    port = free_port()
    log = tmp_path / "gateway.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [*atip, "mcp", "serve", "--only", "flood", "--transport", "http", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        wait_for_port(port, process, log)
        url = f"http://127.0.0.1:{port}/mcp"
        waits: list[float] = []
        call_took: list[float] = []

        async def call() -> None:
            async with Client(url, mode="legacy") as client:
                start = time.monotonic()
                result = await client.call_tool("flood_out", {})
                call_took.append(time.monotonic() - start)
                [block] = result.content
                assert "[REDACTED:password]" in block.text

        async def scenario() -> None:
            async with Client(url, mode="legacy") as lister:
                await lister.list_tools()  # connected before the call starts
                with anyio.fail_after(60):
                    async with anyio.create_task_group() as tasks:
                        tasks.start_soon(call)
                        # the command runs and its output is filtered for about 0.5 s on
                        # a quiet two-core machine: listing starts well inside that
                        await anyio.sleep(0.1)
                        while not call_took:
                            start = time.monotonic()
                            assert [t.name for t in (await lister.list_tools()).tools] == [
                                "flood_out"
                            ]
                            waits.append(time.monotonic() - start)
                            await anyio.sleep(0.01)

        anyio.run(scenario)
    finally:
        stop(process)
    assert call_took[0] < 20
    assert waits
    # stalled, one waited 12 s on a quiet machine; a round trip takes milliseconds of CPU,
    # and past 1 s of wall clock under the load of a shared machine (decision 710)
    assert max(waits) < 5.0, waits
