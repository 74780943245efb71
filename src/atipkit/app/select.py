"""Field selection and filtering of list results (PRD §8.7: `--fields/--select`, `--filter`).

    tool find --filter 'size>100' --filter 'kind=file' --fields name,size

- `--fields a,b.c` (`--select` is the same flag; repeatable, comma-separated) keeps only
  those fields of each record, in that order; a dotted name reaches into a nested record
  and keeps its nesting (`{"b": {"c": ...}}`).
- `--filter 'FIELD OP VALUE'` (repeatable: all must hold) keeps the records that match.
  OP is `=` (or `==`), `!=`, `<`, `<=`, `>`, `>=`, `~` (contains, ignoring case) or `!~`.
  VALUE is compared as the record's value is typed: a number numerically, `true`/`false`
  with a boolean, `null` with null, text as text (so ISO dates order as dates); a list
  field matches `=` and `~` when one of its items does. A record without the field
  matches only `!=` and `!~`.

A field the command's declared output schema does not have is refused before the
command runs (nothing is done for a call that cannot be answered); without a schema, a
field that no record of the result has is refused once the result is read. Either way
the error is E1002 (exit 2) and lists the fields there are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from atipkit.app.errors import InputError, Suggestion
from atipkit.errors import ErrorCode

__all__ = ["Filter", "RecordSelection"]

_EXPRESSION = re.compile(
    r"^(?P<field>[^=!<>~]+?)\s*(?P<op>==|!=|<=|>=|!~|=|<|>|~)\s*(?P<value>.*)\Z", re.S
)
_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?\Z")
_SCALARS = (str, int, float, bool, bytes)


def _path(name: str, where: str) -> tuple[str, ...]:
    parts = tuple(part.strip() for part in name.split("."))
    if not all(parts):
        raise InputError(
            f"{where}: {name!r} is not a field name",
            code=ErrorCode.BAD_VALUE,
            details={"param": where.lstrip("-"), "value": name},
            suggestion=Suggestion("Name fields as in the result: name, or owner.login."),
        )
    return parts


def _record(value: Any) -> dict[str, Any] | None:
    """`value` as a mapping of its fields (dataclasses, models and Structs as `encode`
    writes them), or None when it is no record."""
    if isinstance(value, dict):
        return value
    if value is None or isinstance(value, (*_SCALARS, list, tuple)):
        return None
    from atipkit.app.output import _default

    try:
        found = _default(value)
    except TypeError:
        return None
    return found if isinstance(found, dict) else None


def _lookup(record: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    value = record
    for part in path:
        mapping = _record(value)
        if mapping is None or part not in mapping:
            return False, None
        value = mapping[part]
    return True, value


class Filter:
    """One `--filter` expression, read once."""

    __slots__ = ("field", "op", "path", "raw", "text", "value")

    def __init__(self, expression: str) -> None:
        found = _EXPRESSION.match(expression.strip())
        if found is None:
            raise InputError(
                f"--filter: {expression!r} is not FIELD OP VALUE",
                code=ErrorCode.BAD_VALUE,
                details={"param": "filter", "value": expression},
                suggestion=Suggestion(
                    "Write a field, an operator (= != < <= > >= ~ !~) and a value.",
                    example="--filter 'status=open' --filter 'size>100'",
                ),
            )
        self.raw = expression
        self.field = found["field"].strip()
        self.path = _path(self.field, "--filter")
        self.op = "=" if found["op"] == "==" else found["op"]
        self.text = found["value"].strip()
        self.value: Any = _typed(self.text)

    def __repr__(self) -> str:
        return f"Filter({self.raw!r})"

    def matches(self, record: Any) -> bool:
        present, value = self.lookup(record)
        if self.op in ("!=", "!~"):  # the negation of "=" or "~"
            return not (present and self._holds(self.op[1], value))
        return present and self._holds(self.op, value)

    def lookup(self, record: Any) -> tuple[bool, Any]:
        return _lookup(record, self.path)

    def _holds(self, op: str, value: Any) -> bool:
        if isinstance(value, list):
            return op in ("=", "~") and any(self._holds(op, item) for item in value)
        if op == "~":
            return self.text.casefold() in _text(value).casefold()
        if op == "=":
            if isinstance(value, str):
                return value == self.text
            if isinstance(value, bool) or value is None:
                return value is self.value
            if isinstance(value, int | float):
                return _is_number(self.value) and value == self.value
            return False
        if isinstance(value, bool) or value is None:
            return False
        if isinstance(value, int | float):
            if not _is_number(self.value):
                raise InputError(
                    f"--filter: {self.raw!r} compares the number field {self.field!r} with "
                    f"{self.text!r}, which is no number",
                    code=ErrorCode.BAD_VALUE,
                    details={"param": "filter", "value": self.raw},
                )
            return _compare(op, value, self.value)
        if isinstance(value, str):
            return _compare(op, value, self.text)
        return False


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _compare(op: str, left: Any, right: Any) -> bool:
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    if op == ">":
        return bool(left > right)
    return bool(left >= right)


def _typed(text: str) -> Any:
    if text in ("true", "false"):
        return text == "true"
    if text == "null":
        return None
    if _NUMBER.match(text):
        number = float(text)
        whole = number.is_integer() and not any(c in text for c in ".eE")
        return int(number) if whole else number
    return text


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class RecordSelection:
    """What `--fields` and `--filter` ask of one call."""

    def __init__(self, fields: Iterable[str], filters: Iterable[str]) -> None:
        names: list[str] = []
        for given in fields:
            for name in given.split(","):
                if name.strip() and name.strip() not in names:
                    names.append(name.strip())
        if list(fields) and not names:
            raise InputError(
                "--fields: no field named",
                code=ErrorCode.BAD_VALUE,
                details={"param": "fields"},
                suggestion=Suggestion("Name the fields to keep.", example="--fields name,size"),
            )
        self.fields = [_path(name, "--fields") for name in names]
        self.filters = [Filter(expression) for expression in filters]
        self._seen: set[tuple[str, ...]] = set()
        self._records = 0
        self._known: list[str] = []

    def __bool__(self) -> bool:
        return bool(self.fields or self.filters)

    @property
    def expressions(self) -> list[str]:
        """The filters as given (a cursor is bound to them: another filter is another query)."""
        return [f.raw for f in self.filters]

    def check_schema(self, schema: dict[str, Any] | None) -> None:
        """Refuse, before the command runs, a field its declared output schema (a list of
        records) does not have."""
        item = (schema or {}).get("items") if (schema or {}).get("type") == "array" else None
        if not isinstance(item, dict) or not isinstance(item.get("properties"), dict):
            return
        if item.get("additionalProperties") not in (None, False):
            return
        asked = [(p, "fields") for p in self.fields]
        asked += [(f.path, "filter") for f in self.filters]
        for path, param in asked:
            level: Any = item
            for depth, part in enumerate(path):
                properties = level.get("properties") if isinstance(level, dict) else None
                if not isinstance(properties, dict):
                    break  # below here the schema says nothing: the records will tell
                if part not in properties:
                    raise _unknown(".".join(path[: depth + 1]), list(properties), param)
                level = properties[part]

    def filtered(self, result: Any) -> Any:
        """The records of `result` that every filter keeps (an iterator stays lazy)."""
        if not self.filters:
            return result
        kept = self._filter(_items(result, "--filter"))
        return kept if isinstance(result, Iterator) else list(kept)

    def _filter(self, items: Iterable[Any]) -> Iterator[Any]:
        seen: set[int] = set()
        records = 0
        for item in items:
            record = _record(item)
            if record is None:
                raise _not_records("--filter", item)
            records += 1
            self._known.extend(k for k in record if k not in self._known)
            seen.update(i for i, f in enumerate(self.filters) if f.lookup(record)[0])
            if all(f.matches(record) for f in self.filters):
                yield item
        missing = [f for i, f in enumerate(self.filters) if i not in seen]
        if missing and records:
            raise _unknown(missing[0].field, self._known, "filter")

    def selected(self, result: Any) -> Any:
        """`result` with each record cut to the fields asked for (an iterator stays lazy);
        a field no record had is refused once the last record has been read."""
        if not self.fields:
            return result
        items = _items(result, "--fields")
        if isinstance(result, Iterator):
            return self._stream(items)
        return list(self._stream(items))

    def _stream(self, items: Iterable[Any]) -> Iterator[dict[str, Any]]:
        for item in items:
            yield self._pick(item)
        missing = [p for p in self.fields if p not in self._seen]
        if missing and self._records:
            raise _unknown(".".join(missing[0]), self._known)

    def _pick(self, item: Any) -> dict[str, Any]:
        record = _record(item)
        if record is None:
            raise _not_records("--fields", item)
        self._records += 1
        self._known.extend(k for k in record if k not in self._known)
        out: dict[str, Any] = {}
        for path in self.fields:
            present, value = _lookup(record, path)
            if not present:
                continue
            self._seen.add(path)
            place = out
            for part in path[:-1]:
                place = place.setdefault(part, {})
            place[path[-1]] = value
        return out


def _items(result: Any, flag: str) -> Iterable[Any]:
    if isinstance(result, list | tuple | Iterator):
        return result
    raise InputError(
        f"{flag} applies to a list of records; this result is a {type(result).__name__}",
        code=ErrorCode.USAGE,
        details={"param": flag.lstrip("-")},
        suggestion=Suggestion(f"Drop {flag}: the command returns one value."),
    )


def _not_records(flag: str, item: Any) -> InputError:
    return InputError(
        f"{flag} applies to records; this result holds a {type(item).__name__}",
        code=ErrorCode.USAGE,
        details={"param": flag.lstrip("-")},
        suggestion=Suggestion(f"Drop {flag}: the items have no fields."),
    )


def _unknown(field: str, known: list[str], param: str = "fields") -> InputError:
    return InputError(
        f"--{param}: no field {field!r} in this command's results",
        code=ErrorCode.BAD_VALUE,
        details={"param": param, "field": field, "known": known},
        suggestion=Suggestion(
            "Use one of the fields the results have: " + ", ".join(known)
            if known
            else "Run the command without --fields to see the records."
        ),
    )
