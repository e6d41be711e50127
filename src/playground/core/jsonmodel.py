"""The JSON model machinery: typed dataclasses with one JSON form, each field documented.

Every results dataclass (:mod:`playground.core.results`, :mod:`playground.incident.storyresults` and the modules
it builds on) declares its fields with :func:`doc`, converts with :func:`to_json` and
:func:`from_json`, and is documented by :func:`schema_table` in ``docs/results-schema.md``.
:func:`from_json` is the one place a file is checked: a missing key becomes its default (files
written before a key existed still load), a value of the wrong type is a clear
:class:`ModelError` naming where and which key, and keys this version does not know are kept
(``extra``) and written back unchanged by :func:`to_json`. A :data:`Number` field keeps a number
as it was read: ``1`` stays ``1`` and ``1.0`` stays ``1.0``, written back and printed the same.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from functools import reduce
from operator import or_
from typing import Any

from playground.core.errors import PlaygroundError

#: A number kept as it was read, whole or not: the report prints ``1`` and ``1.0`` differently
#: (``reading.fmt``), so a setting read back must be the number that was written.
Number = int | float


@dataclass(frozen=True)
class OneOf:
    """A union read from a registry when a value is converted, not fixed where the field is
    declared: ``Annotated[Base, OneOf(options)]`` holds any of ``options()``, each told apart by
    its ``fits`` (a fault's verdict: one of the faults registered)."""

    options: Callable[[], tuple[type, ...]]


class ResultsError(PlaygroundError):
    """A results file or directory cannot be used; the message says why."""


class ModelError(ResultsError):
    """A results file does not fit the model; the message names where and why."""


def doc(
    text: str,
    default: Any = None,
    factory: Any = None,
    *,
    omit_none: bool = False,
    omit_empty: bool = False,
    inline: bool = False,
) -> Any:
    """A field with its description for the schema table; ``omit_none``: not written when None
    (a key only some runs have); ``omit_empty``: a list (or tuple) not written when it is empty (rows only
    some runs have); ``inline``: a dataclass whose keys stand in the object itself, where the
    field is, rather than under the field's name (nothing when it is None)."""
    metadata = {"doc": text, "omit_none": omit_none, "omit_empty": omit_empty, "inline": inline}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def field_doc(cls: type, name: str) -> str:
    """The description a field of ``cls`` was declared with (:func:`doc`)."""
    found = next(f for f in fields(cls) if f.name == name)
    text: str = found.metadata["doc"]
    return text


def to_json(obj: Any) -> Any:
    """A dataclass (and what it holds) as JSON values, its ``extra`` keys written back."""
    if is_dataclass(obj):
        out: dict[str, Any] = {}
        for f in fields(obj):
            value = getattr(obj, f.name)
            if f.name == "extra" or (value is None and f.metadata.get("omit_none")):
                continue
            if isinstance(value, list | tuple) and not value and f.metadata.get("omit_empty"):
                continue
            if f.metadata.get("inline"):
                out.update(to_json(value) if value is not None else {})
            else:
                out[f.name] = to_json(value)
        out.update(getattr(obj, "extra", {}))
        return out
    if isinstance(obj, list | tuple):
        return [to_json(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_json(v) for k, v in obj.items()}
    return obj


def from_json(cls: type, data: Any, where: str) -> Any:
    """``data`` as a ``cls``, checked against its type hints; ``where`` starts every error."""
    if not isinstance(data, dict):
        raise ModelError(f"{where}: expected an object, got {type(data).__name__}")
    hints = typing.get_type_hints(cls, include_extras=True)
    label = where
    if isinstance(data.get("name"), str):
        label = f"{where} {data['name']!r}"
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name == "extra":
            continue
        if f.metadata.get("inline"):
            inner = _inlined(hints[f.name])
            present = any(k in data for k in json_keys(inner))
            kwargs[f.name] = from_json(inner, data, where) if present else None
        elif f.name in data:
            kwargs[f.name] = _convert(hints[f.name], data[f.name], f"{label}: {f.name!r}")
        elif f.default is MISSING and f.default_factory is MISSING:  # pragma: no cover
            raise ModelError(f"{label}: missing {f.name!r}")
    if "extra" in {f.name for f in fields(cls)}:
        known = json_keys(cls)
        kwargs["extra"] = {k: v for k, v in data.items() if k not in known}
    return cls(**kwargs)


def json_keys(cls: type) -> list[str]:
    """The keys a ``cls`` is written under, an inline field's own keys where it stands."""
    hints = typing.get_type_hints(cls, include_extras=True)
    keys: list[str] = []
    for f in fields(cls):
        if f.metadata.get("inline"):
            keys += json_keys(_inlined(hints[f.name]))
        elif f.name != "extra":
            keys.append(f.name)
    return keys


def _inlined(hint: Any) -> type:
    """The dataclass an inline field holds (``X`` or ``X | None``)."""
    (cls,) = [o for o in (typing.get_args(hint) or (hint,)) if o is not type(None)]
    return typing.cast(type, cls)


def _resolved(hint: Any) -> Any:
    """``hint`` with a registry's union (:class:`OneOf`) in place of its annotation."""
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        base, *extras = typing.get_args(hint)
        chosen = next((e for e in extras if isinstance(e, OneOf)), None)
        return base if chosen is None else reduce(or_, chosen.options())
    if origin is list:
        (item,) = typing.get_args(hint)
        return list[_resolved(item)]  # type: ignore[misc]
    return hint


def _convert(hint: Any, value: Any, where: str) -> Any:
    hint = _resolved(hint)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return _convert_union(hint, value, where)
    if hint is Any:
        return value
    if isinstance(hint, type) and is_dataclass(hint):
        return from_json(hint, value, where)
    if origin in (list, tuple, dict):
        return _convert_collection(hint, value, where)
    return _convert_scalar(hint, value, where)


def _convert_union(hint: Any, value: Any, where: str) -> Any:
    options = typing.get_args(hint)
    if value is None and type(None) in options:
        return None
    if {int, float} == set(options) - {type(None)}:  # a Number
        if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
            return value
        raise ModelError(f"{where} should be a number, got {value!r:.60}")
    # Dataclasses that say which objects are theirs (``fits``) are tried on those only.
    tried = [
        o for o in options if o is not type(None) and (not hasattr(o, "fits") or o.fits(value))
    ]
    if not tried:
        raise ModelError(f"{where}: {value!r:.60} is none of {_type_name(hint)}")
    errors = []
    for option in tried:
        try:
            return _convert(option, value, where)
        except ModelError as exc:
            errors.append(str(exc))
    raise ModelError(errors[0])


def _convert_collection(hint: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin is list:
        if not isinstance(value, list):
            raise ModelError(f"{where} should be a list, got {value!r:.60}")
        (item,) = typing.get_args(hint)
        return [_convert(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is tuple:
        if not isinstance(value, list):
            raise ModelError(f"{where} should be a list, got {value!r:.60}")
        items = typing.get_args(hint)
        if len(items) == 2 and items[1] is Ellipsis:
            items = (items[0],) * len(value)
        if len(items) != len(value):
            raise ModelError(f"{where} should have {len(items)} items, got {value!r:.60}")
        return tuple(
            _convert(t, v, f"{where}[{i}]")
            for i, (t, v) in enumerate(zip(items, value, strict=True))
        )
    if origin is dict:
        if not isinstance(value, dict):
            raise ModelError(f"{where} should be an object, got {value!r:.60}")
        _, item = typing.get_args(hint)
        return {k: _convert(item, v, f"{where}.{k}") for k, v in value.items()}
    raise ModelError(f"{where}: no conversion for {hint!r}")  # pragma: no cover


def _convert_scalar(hint: Any, value: Any, where: str) -> Any:
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise ModelError(f"{where} should be true or false, got {value!r:.60}")
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ModelError(f"{where} should be a whole number, got {value!r:.60}")
    if hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
            return float(value)
        raise ModelError(f"{where} should be a number, got {value!r:.60}")
    if hint is str:
        if isinstance(value, str):
            return value
        raise ModelError(f"{where} should be text, got {value!r:.60}")
    raise ModelError(f"{where}: no conversion for {hint!r}")  # pragma: no cover


def _type_name(hint: Any) -> str:
    text = (
        str(_resolved(hint)).replace("<class '", "").replace("'>", "").replace("NoneType", "null")
    )
    text = text.replace("int | float", "number")
    return re.sub(r"[\w.]+\.(\w+)", r"\1", text)


def schema_table(cls: type, heading: str) -> list[str]:
    """One dataclass's section of the schema page: its heading, then a row per field."""
    hints = typing.get_type_hints(cls, include_extras=True)
    lines = [f"## {heading}", "", "| key | type | meaning |", "|---|---|---|"]
    for f in fields(cls):
        if f.name == "extra":
            continue
        if f.metadata.get("inline"):
            inner = _inlined(hints[f.name]).__name__
            lines.append(f"| the keys of {inner} | | {f.metadata.get('doc', '')} |")
            continue
        lines.append(
            f"| `{f.name}` | {_type_name(hints[f.name]).replace('|', 'or')} | "
            f"{f.metadata.get('doc', '')} |"
        )
    lines.append("")
    return lines
