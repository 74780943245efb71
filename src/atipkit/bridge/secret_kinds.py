"""The kinds of secret tool output must not carry to a model, and the one scanner that
finds them (RFC 0.6 §11.3).

`RULES` is the table. Each row names a kind and gives a pattern whose `secret` group is
what `[REDACTED:kind]` replaces; what surrounds it (a key, a header's name and scheme, a
URL's user, the quotes) stays, so the output still reads: `PASSWORD=[REDACTED:password]`.
A kind may have several rows (a token bare, the same token in a config file). Where the
secrets of two rows overlap, their union is redacted once and named by the earlier row,
so specific kinds come first: `password=ghp_…` is a github-token.

Tool output is untrusted, so every pattern runs in time linear in the text:
- it starts with a literal, so the engine jumps from one occurrence to the next; a row
  that cannot has a `gate`, literals one of which must occur for it to be tried at all;
- a token that must begin a word says so with a lookbehind *after* its literal prefix
  (placed before, it would make the engine try every position of the text);
- every repetition is bounded, or always succeeds (a private key block runs to its END
  line or to the end of the text), and stops at a character that begins the next
  occurrence, so no character is scanned from more than a few starts;
- a value may hold the next key (`password=${password=${…`), so it is checked for a
  placeholder before it is scanned: one scanned and then refused is scanned again from
  every key inside it.
tests/test_result_filter.py runs every row on adversarial text at the runner's 4 MiB cap.

What is a secret and what only looks like one is decision 215 in docs/decisions.md; the
corpus that holds it is tests/fixtures/secrets/.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
import re
from typing import NamedTuple


class Rule(NamedTuple):
    """One row of the table: `pattern`'s group `secret` is redacted as `kind`."""

    kind: str
    pattern: str
    fold: bool = False
    """Matched against the text with ASCII letters lowered (keys and header names are
    case-insensitive); the positions are the text's own."""
    gate: tuple[str, ...] = ()
    """For a pattern that cannot start with a literal: one of these must occur."""


_W = "A-Za-z0-9_"


def _begins(left: str, head: str = "") -> str:
    """Here (after `head`, fixed-width) a word begins: `head` follows none of `left`'s
    characters, or follows a line break or tab written as an escape (`\\n`), as JSON
    writes them: commands print JSON, and an MCP tool's structured result is read as it."""
    return f"(?<![{left}]{head}(?<!\\\\[nrt]{head}))"


def _token(head: str, body: str, *, left: str = _W, right: str | None = None) -> str:
    """A token that begins a word with `head` (a fixed-width pattern, a literal first) and
    goes on with `body`; `right`: characters that may not follow it (for fixed lengths)."""
    end = f"(?![{right}])" if right else ""
    return f"(?P<secret>{head}{_begins(left, head)}{body}){end}"


# -- what stands in a secret's place without being one (decision 215) -------------------

_END = r"(?=[\s\"'`,;&<>\\)\]}@]|$)"  # the end of a value
# Written for lowered text; the few rows matched as they are see lowercase words only,
# and tell a metavariable by its case. No (?i): the engine then skips a branch at its
# first letter, and this runs wherever a value is tried.
_PLACEHOLDER = (
    r"<|[$%]\{|\$\(|\{\{|\{[0-9]{0,2}\}END|%\([a-z_]{1,40}\)sEND|%[sd]END"  # references
    r"|\$[A-Za-z_][A-Za-z0-9_]{0,63}END"
    r"|(?:\*{3,}|[xX]{3,}|•{3,}|\.{3,}|#{3,}|\?{3,}|_{3,}|-{3,})END"  # masks
    r"|[A-Za-z0-9_-]{0,12}[*•]{3,}[A-Za-z0-9]{0,8}END"  # ****ABCD, gho_*******
    r"|\[(?:redacted|REDACTED|hidden|masked|filtered|secret)"
    r"|(?:null|none|nil|true|false|undefined|yes|no|on|off|required|optional|any"  # not values
    r"|string|str|text|integer|int|number|float|boolean|bool|object|array|bytes"  # types
    r"|password|passwd|pass|pwd|passphrase|secret|token|key|api[_-]?key|credentials?)END"
).replace("END", _END)
# code, not a value, where code is printed (`token = self.token`, `os.environ["X"]`)
_CODE = (
    rf"|[a-z_$]{{1,40}}+(?:\.[a-z_$]{{1,40}}+){{0,8}}+[(\[]"  # a call, an index: f(, os.environ[
    rf"|[a-z_$]{{1,40}}+(?:\.[a-z_$]{{1,40}}+){{1,8}}+{_END}"  # an attribute: self.token
)
# a metavariable of help text (`--password PASSWORD`), where case is known
_METAVAR = rf"|[A-Z][A-Z_]{{1,31}}+{_END}"


def _secret(
    value: str,
    *,
    code: bool = False,
    metavar: bool = False,
    then: str = "",
    head: str = "",
    placeholder: str = _PLACEHOLDER,
) -> str:
    """Group `secret`: `value` (followed by `then`) unless it is a placeholder. The
    placeholder is looked for first, a short look: a value scanned and only then found
    to be a placeholder was scanned again from every key inside it (`authorization:${`
    repeated took 8 s at 4 MiB). `head`, what a value begins with, spares the look where
    no value can begin."""
    placeholder += (_CODE if code else "") + (_METAVAR if metavar else "")
    guard = f"(?={head})" if head else ""
    return f"{guard}(?!{placeholder})(?P<secret>{value})" + (f"(?={then})" if then else "")


# a URL's password: runs of characters up to a `:` (not `://`, where the next URL begins)
# or the `@` of the host; `@…` parts followed by another `@` belong to it too, those
# holding no `/` (the path begins there). Possessive: never rescanned.
_URL_CHAR = r"[^\s:@\"'<>`]"
_URL_PART = r"[^\s:@/\"'<>`]"
_URL_PASSWORD = (
    rf"(?:{_URL_CHAR}|:(?!//)){_URL_CHAR}*+(?::(?!//){_URL_CHAR}*+)*+"
    rf"(?:@{_URL_PART}++(?::(?!//){_URL_PART}*+)*+(?=@)){{0,16}}+"
)
# a URL's password is never code, a type or a flag's metavariable: a check of its own,
# cheaper where a text is dense with URLs
_URL_PLACEHOLDER = (
    r"<|\[|\$[{(]|\{\{|%\(|\$[A-Za-z_][A-Za-z0-9_]{0,63}@"  # references, a marker
    r"|(?:\*{3,}|[xX]{3,}|•{3,}|\.{3,})@|[A-Za-z0-9_-]{0,12}[*•]{3,}[A-Za-z0-9]{0,8}@"  # masks
    r"|(?:password|pass|passwd|pwd|secret|token|null|none)@"  # its own name
)


# -- assignments: KEY=value, "key": "value", key: value, key => value ---------------------

# a key's parts after its keyword that make it name something else than the secret
# itself: `PASSWORD_FILE=/run/secrets/db`, `token_type: bearer`, `secret_name: prod-db`
_NOT_A_SECRET = (
    "file|files|path|dir|directory|url|uri|endpoint|host|length|len|min|max|size|policy|"
    "prompt|hint|required|expires|expiry|expiration|ttl|timeout|type|name|id|ids|arn|ref|"
    "header|field|env|var|command|cmd|count|limit|usage|enabled|disabled|reset|rotation|"
    "changed|updated|created|version|algorithm|alg|format|mode|store|provider|source|label|"
    "description|help|schema|pattern|placeholder|public|publishable"
)
_KEY_REST = rf"(?:[_.-](?!(?:{_NOT_A_SECRET})(?![a-z0-9]))[a-z0-9]{{1,24}}){{0,3}}"
_STOP = "\\s\"'`,;&<>\\\\)\\]}"  # what ends a bare value: space, quotes, separators, brackets


def _value(minimum: int, *, colon: bool) -> str:
    """The value after a separator, as group `secret`: in double quotes (escapes allowed;
    inside `\"…\"`, JSON within JSON, up to the escaped quote), in single quotes, or bare.
    A bare value never starts like a structure (`{"type": …}`, `[`, `(`) and holds no
    closing bracket (`User{password=x}`). After a colon, as in YAML, a bare value follows a
    space (`https://x-access-token:ghs_…@github.com` is a URL's user, not a key) and ends
    its line (`passwd: password updated successfully` is a message, not `passwd`'s value);
    a colon in it is followed by no space. Repetitions are possessive: a value that does
    not fit is given up at once.
    """
    n = f"{{{minimum},512}}+"
    escaped = rf"(?<=\\\")(?:[^\"\\\n]|\\[^\"\n]){n}(?=\\\")"
    double = rf"(?<!\\\")(?<=\")(?:[^\"\\\n]|\\[^\n]){n}(?=\")"
    single = rf"(?<=')[^'\n]{n}(?=')"
    if colon:
        start = rf"(?<=[ \t])[^{_STOP}:{{\[(]"
        bare = (
            rf"{start}(?:[^{_STOP}:]|:(?![\s:])){{{minimum - 1},511}}+"
            r"(?=[ \t]{0,64}(?:[\r\n#,}\\\"]|$))"
        )
    else:
        start = rf"(?<![\\\"'])[^{_STOP}{{\[(]"
        bare = rf"{start}[^{_STOP}]{{{minimum - 1},511}}+"
    quoted = r"(?<=[\"'])"  # where a quoted value begins
    return r"(?:\\?[\"'])?" + _secret(
        f"{escaped}|{double}|{single}|{bare}", code=True, head=f"{quoted}|{start}"
    )


def _assign(kind: str, key: str, *, minimum: int = 6) -> tuple[Rule, Rule]:
    """`key` (a lowercase pattern, a literal first, that may not go on with a letter:
    `tokens`, `tokenizer`, `passwordless`) then a value: `key = value` and `key: value`."""
    head = rf"{key}(?![a-z]){_KEY_REST}\\?[\"']?[ \t]{{0,8}}"
    equals = rf"{head}(?::=|=>|=)[ \t]{{0,8}}{_value(minimum, colon=False)}"
    colon = rf"{head}:[ \t]{{0,8}}{_value(minimum, colon=True)}"
    return Rule(kind, equals, fold=True), Rule(kind, colon, fold=True)


def _header(kind: str, scheme: str, value: str) -> Rule:
    """`Authorization: <scheme> <value>`, as a header, in JSON or in a curl command."""
    pattern = rf"authorization\\?[\"']?[ \t]{{0,8}}[:=][ \t]{{0,8}}\\?[\"']?{scheme}" + _secret(
        value
    )
    return Rule(kind, pattern, fold=True)


# A key named by its keyword: what a prefix says is not the secret (`next_token`) is left
_TOKEN_KEY = "token" + "".join(
    f"(?<!{p}token)"
    for p in (
        "next",
        "next_",
        "page",
        "page_",
        "continuation",
        "continuation_",
        "sync",
        "sync_",
        "cancellation",
        "cancellation_",
        "resume",
        "resume_",
        "pagination",
        "pagination_",
    )
)


RULES: tuple[Rule, ...] = (
    # -- blocks of key material ---------------------------------------------------------
    Rule(
        "private-key",
        r"(?P<secret>-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z))",
    ),
    Rule(
        "private-key",
        r"Private-Lines: [0-9]{1,4}(?:\r?\n|(?:\\r)?\\n)"
        r"(?P<secret>(?:[A-Za-z0-9+/=]{1,128}(?:\r?\n|(?:\\r)?\\n)){1,256})",
    ),
    *(  # base64 of a PEM key in a Kubernetes secret or a kubeconfig
        Rule(
            "private-key",
            key + r"\\?[\"']?[ \t]{0,8}:[ \t]{0,8}\\?[\"']?(?P<secret>[a-z0-9+/]{16,16384}={0,2})",
            fold=True,
        )
        for key in (r"tls\.key", "ssh-privatekey", "client-key-data")
    ),
    Rule(
        "age-secret-key",
        _token("AGE-SECRET-KEY-1", "[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", right=_W),
    ),
    # -- tokens with a prefix of their own ------------------------------------------------
    Rule(
        "jwt",
        _token(
            "eyJ",
            r"[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{4,8192}\.[A-Za-z0-9_-]{8,4096}",
            left=r"A-Za-z0-9_\-./+=",
        ),
    ),
    Rule("anthropic-key", _token("sk-ant-", "[A-Za-z0-9_-]{20,300}")),
    Rule(
        "openai-key",
        _token(
            "sk-",
            r"(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,300}"
            r"|(?=[A-Za-z]{0,299}[0-9])[A-Za-z0-9]{32,300}(?![A-Za-z0-9_-]))",
        ),
    ),
    Rule("github-token", _token("gh[pousr]_", "[A-Za-z0-9]{36,251}")),
    Rule("github-token", _token("github_pat_", "[A-Za-z0-9_]{22,251}")),
    Rule(
        "gitlab-token",
        _token("gl", "(?:pat|dt|rt|ptt|ft|imt|agent|oas|soat|ffct|cbt)-[A-Za-z0-9_.-]{20,300}"),
    ),
    Rule("gitlab-runner-token", _token("GR1348941", "[A-Za-z0-9_-]{20,64}")),
    Rule("slack-token", _token("xox", "[abposre](?:\\.xox[bp])?-[0-9]{1,13}-[A-Za-z0-9-]{8,250}")),
    Rule(
        "slack-app-token", _token("xapp-", "[0-9]-[A-Z0-9]{6,16}-[0-9]{6,16}-[A-Za-z0-9]{20,128}")
    ),
    Rule(
        "slack-webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9+/_-]{20,128})",
    ),
    Rule(
        "discord-webhook",
        r"discord(?:app)?\.com/api/webhooks/[0-9]{5,30}/(?P<secret>[A-Za-z0-9_-]{40,100})",
    ),
    Rule(
        "aws-access-key",
        _token("A", "(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}", right="A-Za-z0-9"),
    ),
    Rule("gcp-api-key", _token("AIza", "[A-Za-z0-9_-]{35}", right=_W + "-")),
    Rule("google-oauth-secret", _token("GOCSPX-", "[A-Za-z0-9_-]{28}", right=_W + "-")),
    Rule("google-oauth-token", _token(r"ya29\.", "[A-Za-z0-9_-]{20,2048}")),
    Rule("google-oauth-token", _token("1//0", "[A-Za-z0-9_-]{40,512}")),
    Rule("stripe-key", _token("sk_", "(?:live|test)_[A-Za-z0-9]{16,247}")),
    Rule("stripe-key", _token("rk_", "(?:live|test)_[A-Za-z0-9]{16,247}")),
    Rule("stripe-webhook-secret", _token("whsec_", "[A-Za-z0-9+/=]{24,128}")),
    Rule("npm-token", _token("npm_", "[A-Za-z0-9]{36}", right=_W)),
    Rule("pypi-token", _token("pypi-", "AgE[A-Za-z0-9_-]{50,2048}")),
    Rule("huggingface-token", _token("hf_", "[A-Za-z0-9]{30,40}", right=_W)),
    Rule("huggingface-token", _token("api_org_", "[A-Za-z0-9]{30,40}", right=_W)),
    Rule("twilio-api-key", _token("SK", "[0-9a-f]{32}", right=_W)),
    Rule("sendgrid-key", _token(r"SG\.", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", right=_W + "-")),
    Rule("digitalocean-token", _token("do", "[opr]_v1_[a-f0-9]{64}", right=_W)),
    Rule("shopify-token", _token("shp", "(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", right=_W)),
    Rule(
        "mailchimp-key",
        _begins(_W) + r"(?P<secret>[0-9a-f]{32}-us[0-9]{1,2})(?![A-Za-z0-9_])",
        gate=("-us",),
    ),
    Rule("databricks-token", _token("dapi", "[a-f0-9]{32}(?:-[0-9])?", right=_W)),
    Rule("atlassian-token", _token("ATATT3", "[A-Za-z0-9_=-]{150,250}")),
    Rule("linear-api-key", _token("lin_api_", "[A-Za-z0-9]{40}", right=_W)),
    Rule("notion-token", _token("ntn_", "[0-9]{11}[A-Za-z0-9]{35}", right=_W)),
    Rule("notion-token", _token("secret_", "[A-Za-z0-9]{43}", right=_W)),
    Rule("postman-api-key", _token("PMAK-", "[a-f0-9]{24}-[a-f0-9]{34}", right=_W)),
    Rule(
        "doppler-token",
        _token(r"dp\.", r"(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}", right=_W),
    ),
    Rule("pulumi-token", _token("pul-", "[a-f0-9]{40}", right=_W)),
    Rule("rubygems-key", _token("rubygems_", "[a-f0-9]{48}", right=_W)),
    Rule("grafana-token", _token("glsa_", "[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", right=_W)),
    Rule("grafana-token", _token("glc_", "[A-Za-z0-9+/]{32,400}={0,2}")),
    Rule("grafana-token", _token("eyJrIjoi", "[A-Za-z0-9]{40,400}={0,2}")),
    Rule("sentry-token", _token("sntryu_", "[a-f0-9]{64}", right=_W)),
    Rule("sentry-token", _token("sntrys_", "eyJ[A-Za-z0-9+/=_]{50,600}")),
    Rule("newrelic-key", _token("NR", "(?:AK-[A-Z0-9]{27}|II-[A-Za-z0-9_-]{32})", right=_W)),
    Rule("square-token", _token("sq0", "(?:atp|csp)-[A-Za-z0-9_-]{22,60}")),
    Rule("square-token", _token("EAAA", "[A-Za-z0-9_-]{60}", right=_W)),
    Rule(
        "telegram-bot-token",
        r"(?<![0-9])(?P<secret>[0-9]{8,10}:AA[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])",
        gate=(":AA",),
    ),
    Rule("sendinblue-key", _token("xkeysib-", "[a-f0-9]{64}-[A-Za-z0-9]{16}", right=_W)),
    Rule("planetscale-token", _token("pscale_", "(?:tkn|oauth|pw)_[A-Za-z0-9_.=-]{32,64}")),
    Rule("perplexity-key", _token("pplx-", "[A-Za-z0-9]{48}", right=_W)),
    Rule("openshift-token", _token("sha256~", "[A-Za-z0-9_-]{43}", right=_W + "-")),
    Rule("heroku-key", _token("HRKU-", "AA[A-Za-z0-9_-]{58}", right=_W + "-")),
    Rule("onepassword-token", _token("ops_", "eyJ[A-Za-z0-9+/]{100,4096}={0,3}")),
    Rule(
        "onepassword-token",
        _token(
            "A3-",
            "[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
            right=_W,
        ),
    ),
    Rule("dynatrace-token", _token(r"dt0c01\.", r"[A-Z0-9]{24}\.[A-Z0-9]{64}", right=_W)),
    Rule("flyio-token", _token("fo1_", "[A-Za-z0-9_-]{43}", right=_W + "-")),
    Rule("flyio-token", _token("fm2_", "[A-Za-z0-9+/]{100,4096}={0,3}")),
    Rule("prefect-token", _token("pnu_", "[A-Za-z0-9]{36}", right=_W)),
    Rule("readme-token", _token("rdme_", "[a-z0-9]{70}", right=_W)),
    Rule("easypost-key", _token("EZ", "[AT]K[A-Za-z0-9]{54}", right=_W)),
    Rule("groq-key", _token("gsk_", "[A-Za-z0-9]{52}", right=_W)),
    Rule("xai-key", _token("xai-", "[A-Za-z0-9]{80}", right=_W)),
    Rule("replicate-token", _token("r8_", "[A-Za-z0-9]{37}", right=_W)),
    Rule("facebook-token", _token("EAA", "[MC][A-Za-z0-9]{100,1024}")),
    Rule("artifactory-key", _token("AKCp", "[A-Za-z0-9]{69}", right=_W)),
    Rule("clojars-token", _token("CLOJARS_", "[a-z0-9]{60}", right=_W)),
    Rule("alibaba-access-key", _token("LTAI", "[A-Za-z0-9]{20}", right=_W)),
    Rule("vault-token", _token(r"hv[sb]\.", "[A-Za-z0-9_-]{90,300}")),
    Rule(
        "terraform-token",
        _begins("A-Za-z0-9") + r"(?P<secret>[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70})",
        gate=(".atlasv1.",),
    ),
    Rule("cloudflare-origin-key", _token(r"v1\.0-", "[a-f0-9]{24}-[a-f0-9]{146}", right=_W)),
    Rule(
        "mapbox-secret-token",
        _token(r"sk\.", r"eyJ[A-Za-z0-9_-]{20,200}\.[A-Za-z0-9_-]{20,100}", right=_W + "-"),
    ),
    Rule(
        "azure-ad-client-secret",
        _begins("A-Za-z0-9_~.-")
        + r"(?P<secret>[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])",
        gate=("Q~",),
    ),
    # -- secrets named by their place in a config, a connection string, a URL -------------
    Rule(
        "aws-secret-key",
        r"secret_?access_?key(?![a-z0-9])\\?[\"']?[ \t]{0,8}[:=][ \t]{0,8}\\?[\"']?"
        r"(?P<secret>[a-z0-9/+=]{40})(?![a-z0-9/+=])",
        fold=True,
    ),
    Rule(
        "aws-secret-key",
        r"aws_secret_key(?![a-z0-9])\\?[\"']?[ \t]{0,8}[:=][ \t]{0,8}\\?[\"']?"
        r"(?P<secret>[a-z0-9/+=]{40})(?![a-z0-9/+=])",
        fold=True,
    ),
    *(
        Rule(
            "aws-session-token",
            key + r"\\?[\"']?[ \t]{0,8}[:=][ \t]{0,8}\\?[\"']?(?P<secret>[a-z0-9/+=]{100,4096})",
            fold=True,
        )
        for key in (r"aws_s(?:ession|ecurity)_token(?![a-z0-9])", r"\"sessiontoken")
    ),
    Rule(
        "twilio-auth-token",
        r"twilio_?auth_?token(?![a-z0-9])\\?[\"']?[ \t]{0,8}[:=][ \t]{0,8}\\?[\"']?"
        r"(?P<secret>[0-9a-f]{32})(?![0-9a-z])",
        fold=True,
    ),
    Rule("azure-storage-key", r"accountkey=(?P<secret>[a-z0-9+/]{40,100}={0,2})", fold=True),
    Rule(  # az storage account keys list
        "azure-storage-key",
        r"\"keyname\": \"key[0-9]\",\s{1,40}\"permissions\": \"[a-z]{1,10}\",\s{1,40}"
        r"\"value\": \"(?P<secret>[a-z0-9+/]{86}==)\"",
        fold=True,
    ),
    Rule(
        "azure-shared-access-key",
        r"sharedaccesskey=(?P<secret>[a-z0-9+/]{40,100}={0,2})",
        fold=True,
    ),
    Rule("azure-sas-signature", r"sig=(?<=[?&;]sig=)(?P<secret>[a-z0-9%+/=]{16,256})", fold=True),
    Rule(  # terraform output -json
        "sensitive-value",
        r"\"sensitive\": true,\s{1,40}\"type\": \"string\",\s{1,40}\"value\": \""
        r"(?P<secret>(?:[^\"\\\n]|\\[^\n]){1,512}+)\"",
        fold=True,
    ),
    Rule("request-signature", r"signature=(?P<secret>[0-9a-f]{64})(?![0-9a-z])", fold=True),
    Rule(
        "docker-auth",
        r"\"auth\\?\"[ \t]{0,8}:[ \t]{0,8}\\?\"(?P<secret>[a-z0-9+/=]{8,4096})\\?\"",
        fold=True,
    ),
    Rule(
        "docker-auth",
        r"\.docker(?:configjson|cfg)\\?[\"']?[ \t]{0,8}:[ \t]{0,8}\\?[\"']?"
        r"(?P<secret>[a-z0-9+/]{16,65536}={0,2})",
        fold=True,
    ),
    # a URL's password: `scheme://user:password@host`, the user maybe empty, the password
    # maybe holding `/` or `@` (the host follows the last `@` before the path); not a port
    Rule(
        "password",
        r"://[^\s/:@\"'<>`]{0,256}+:(?![0-9]{1,5}+(?:[/?#\s\"'<>]|$))"
        + _secret(_URL_PASSWORD, then=r"@[^\s@/\"'<>`]", placeholder=_URL_PLACEHOLDER),
    ),
    Rule(
        "password",
        r"login\s{1,8}[^\s]{1,128}\s{1,8}password\s{1,8}" + _secret(r"[^\s]{1,256}+"),
        fold=True,
    ),
    Rule("password", r"<pass(?:word|wd)>" + _secret(r"[^<\n]{1,256}+(?=</)"), fold=True),
    Rule(  # flags are lowercase: matched as they are, where a metavariable is told by its case
        "password",
        r"--pass(?:word|wd)[ \t]{1,4}[\"']?" + _secret(r"[^\s\"'-][^\s\"']{0,255}+", metavar=True),
    ),
    Rule(  # SQL: CREATE ROLE … PASSWORD '…', … IDENTIFIED BY '…'
        "password",
        r"pass(?:word|wd)\s{1,8}'" + _secret(r"[^'\n]{1,256}+(?=')"),
        fold=True,
    ),
    Rule("password", r"identified\s{1,8}by\s{1,8}'" + _secret(r"[^'\n]{1,256}+(?=')"), fold=True),
    # -- HTTP authentication --------------------------------------------------------------
    _header("bearer-token", r"bearer[ \t]{1,8}", r"[^\s\"',;]{1,4096}+"),
    _header("basic-auth", r"basic[ \t]{1,8}", r"[a-z0-9+/=]{4,4096}+"),
    _header(
        "authorization",
        r"(?!bearer\s|basic\s)(?:(?:token|digest|negotiate|sso-key|apikey|key|ntlm)[ \t]{1,8})?",
        r"[^\s\"',;]{8,4096}+",
    ),
    Rule(
        "bearer-token",
        r"bearer[ \t]{1,8}(?P<secret>(?=[a-z._~+/=-]{0,4096}[0-9])[a-z0-9._~+/=-]{16,4096})",
        fold=True,
    ),
    Rule(
        "basic-auth",
        r"-u(?<![A-Za-z0-9_-]-u)[ \t]{1,4}[\"']?[^\s:\"']{1,128}:"
        r"(?![0-9]{1,10}(?:[\s\"']|$))" + _secret(r"[^\s\"']{1,256}+"),
    ),
    Rule(
        "basic-auth",
        r"--user[ \t=]{1,4}[\"']?[^\s:\"']{1,128}:(?![0-9]{1,10}(?:[\s\"']|$))"
        + _secret(r"[^\s\"']{1,256}+"),
    ),
    Rule(
        "basic-auth",
        r"_auth(?![a-z])[ \t]{0,8}=[ \t]{0,8}[\"']?(?P<secret>[a-z0-9+/]{8,1024}={0,2})",
        fold=True,
    ),
    Rule(  # the whole header, `name=value; Path=/; HttpOnly` and all
        "cookie",
        r"cookie" + _begins("a-z0-9_", "cookie") + r"\\?[\"']?[ \t]{0,8}:[ \t]{0,8}\\?[\"']?"
        r"(?P<secret>[a-z0-9_.%!#$*+^|~-]{1,128}=[^\r\n\"]{0,4096})",
        fold=True,
    ),
    # -- the key says it: a secret's name, then its value ---------------------------------
    *_assign("password", r"pass(?<![/\\]pass)(?:word|wd|phrase|wort)", minimum=1),
    *_assign("password", r"pass(?<=[_.-]pass)", minimum=1),
    *_assign("password", r"pwd(?<=[_.-]pwd)", minimum=1),
    *_assign("private-key", r"private[_.-]?key"),
    *_assign("api-key", r"api[_.-]?key"),
    *_assign("api-key", r"subscription[_.-]?key"),
    *_assign("secret", r"secret(?:key|token|value|string)?"),
    *(
        rule
        for word in ("access", "auth", "app", "master", "encryption", r"signing(?<!user\.signing)")
        for rule in _assign("secret", rf"{word}[_.-]?key")
    ),
    *_assign("token", _TOKEN_KEY),
    Rule(
        "token",
        r"--(?:token|auth-token|access-token|api-key|secret|client-secret)[ \t]{1,4}[\"']?"
        + _secret(r"[^\s\"'-][^\s\"']{0,255}+", metavar=True),
    ),
)


class _Compiled(NamedTuple):
    kind: str
    regex: re.Pattern[str]
    span: operator.methodcaller  # a match's `span` of group `secret`
    fold: bool
    gate: tuple[str, ...]


@functools.cache
def _compiled() -> tuple[_Compiled, ...]:
    """The table compiled, once, at the first filtered output (not at import)."""
    out = []
    for rule in RULES:
        regex = re.compile(rule.pattern)
        span = operator.methodcaller("span", regex.groupindex["secret"])
        out.append(_Compiled(rule.kind, regex, span, rule.fold, rule.gate))
    return tuple(out)


def _fold(text: str) -> str:
    """`text` with ASCII letters lowered, position for position."""
    folded = text.lower()
    if len(folded) != len(text):  # a few letters lower to two characters (İ)
        folded = text.translate(_ASCII_LOWER)
    return folded


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def find(text: str) -> list[tuple[int, int, str]]:
    """Each secret in `text` as (start, end, kind), in order; overlapping ones are one,
    named by the earliest row."""
    starts, ends, kinds = _find(text)
    return list(zip(starts, ends, kinds, strict=True))


def redact(text: str) -> tuple[str, int]:
    """`text` with each secret replaced by `[REDACTED:kind]`, and how many there were."""
    starts, ends, kinds = _find(text)
    return _replaced(text, starts, ends, kinds), len(starts)


def redact_lines(texts: list[str]) -> list[str]:
    """`texts` redacted as the lines of one output (a JSON value's strings), in one pass
    however many there are: a secret that runs on past a line's end (a key block given as
    a list of lines) is redacted in each line it covers. `texts` itself if none holds any."""
    joined = "\n".join(texts)
    starts, ends, kinds = _find(joined)
    if not starts:
        return texts
    # where each line begins in `joined`; then the secrets cut at the ends of lines
    offsets = list(itertools.accumulate(map((1).__add__, map(len, texts)), initial=0))
    line_ends = map(
        offsets.__getitem__, map(bisect.bisect_right, itertools.repeat(offsets), starts)
    )
    if any(map(operator.ge, ends, line_ends)):
        starts, ends, kinds = _cut(starts, ends, kinds, offsets)
    # where each line begins once redacted: the first k secrets changed the length by
    # change[k], each by its marker's length less its own
    grown = map(
        operator.sub, map(len, map(_MARKERS.__getitem__, kinds)), map(operator.sub, ends, starts)
    )
    change = list(itertools.accumulate(grown, initial=0))
    before = map(bisect.bisect_left, itertools.repeat(starts), offsets)
    begins = list(map(operator.add, offsets, map(change.__getitem__, before)))
    redacted = _replaced(joined, starts, ends, kinds)
    return list(map(redacted.__getitem__, map(slice, begins, map((-1).__add__, begins[1:]))))


def _cut(
    starts: list[int], ends: list[int], kinds: list[str], offsets: list[int]
) -> tuple[list[int], list[int], list[str]]:
    """The secrets cut where a line ends (its `\\n` left out), a piece in each line."""
    pieces: tuple[list[int], list[int], list[str]] = ([], [], [])
    for start, end, kind in zip(starts, ends, kinds, strict=True):
        line = bisect.bisect_right(offsets, start)  # the next line's
        while start < end:
            stop = min(end, offsets[line] - 1)
            if start < stop:
                pieces[0].append(start)
                pieces[1].append(stop)
                pieces[2].append(kind)
            start = offsets[line]
            line += 1
    return pieces


def _replaced(text: str, starts: list[int], ends: list[int], kinds: list[str]) -> str:
    if not starts:
        return text
    parts: list[str] = [""] * (2 * len(starts) + 1)
    parts[0::2] = map(text.__getitem__, map(slice, [0, *ends], [*starts, len(text)]))
    if len(set(kinds)) == 1:
        parts[1::2] = [_MARKERS[kinds[0]]] * len(starts)
    else:
        parts[1::2] = map(_MARKERS.__getitem__, kinds)
    return "".join(parts)


_MARKERS = {kind: f"[REDACTED:{kind}]" for kind in {rule.kind for rule in RULES}}


def _find(text: str) -> tuple[list[int], list[int], list[str]]:
    """The secrets of `text` as starts, ends and kinds. Each match costs one step of a
    Python loop; the rest runs in C, since a text can hold hundreds of thousands."""
    rules = _compiled()
    folded: str | None = None
    found: list[tuple[int, list[tuple[int, int]]]] = []
    for rank, rule in enumerate(rules):
        if rule.fold:
            if folded is None:
                folded = _fold(text)
            subject = folded
        else:
            subject = text
        if rule.gate and not any(g in subject for g in rule.gate):
            continue
        spans = list(map(rule.span, rule.regex.finditer(subject)))
        if spans:
            found.append((rank, spans))
    if not found:
        return [], [], []
    if len(found) == 1:  # one row's matches: in order and apart
        rank, spans = found[0]
        flat = list(itertools.chain.from_iterable(spans))
        return flat[0::2], flat[1::2], [rules[rank].kind] * len(spans)
    # every row's finds in columns, ordered by where they start: sorting their positions
    # (each row's are in order already) makes no tuple of a find, which dense output pays
    # for in time and in the collector's passes over them
    chain = itertools.chain.from_iterable
    starts = list(chain(map(operator.itemgetter(0), spans) for _rank, spans in found))
    ends = list(chain(map(operator.itemgetter(1), spans) for _rank, spans in found))
    ranks = list(chain(itertools.repeat(rank, len(spans)) for rank, spans in found))
    order = sorted(range(len(starts)), key=starts.__getitem__)
    starts, ends, ranks = (list(map(column.__getitem__, order)) for column in (starts, ends, ranks))
    if any(map(operator.lt, starts[1:], ends)):  # overlaps: one secret, the earliest row's
        starts, ends, ranks = _merge(starts, ends, ranks)
    return starts, ends, [rules[r].kind for r in ranks]


def _merge(
    starts: list[int], ends: list[int], ranks: list[int]
) -> tuple[list[int], list[int], list[int]]:
    merged: tuple[list[int], list[int], list[int]] = ([starts[0]], [ends[0]], [ranks[0]])
    for s, e, r in zip(starts, ends, ranks, strict=True):
        if s < merged[1][-1]:
            merged[1][-1] = max(merged[1][-1], e)
            merged[2][-1] = min(merged[2][-1], r)
        else:
            merged[0].append(s)
            merged[1].append(e)
            merged[2].append(r)
    return merged
