"""The results model: what one run measured, as typed objects with one JSON form.

`results.json` is the serialised :class:`Run`; each measurement is an :class:`Entry`. Attribute
names are the JSON keys, so ``entry["steady_rps"]`` in old code is ``entry.steady_rps`` here.
:meth:`Run.from_json` is the one place a file is checked: a missing key becomes None (files
written before a key existed still load), a value of the wrong type is a clear
:class:`ModelError` naming the entry and the key, and keys this version does not know are kept
(``extra``) and written back unchanged.

The schema table in ``docs/results-schema.md`` is generated from the field descriptions below:
``python -m playground.model > docs/results-schema.md`` (a unit test checks it is current).
A fault run (``playground faults``) shares :class:`RunHeader`; its own entries are its own.
"""

from __future__ import annotations

import re
import types
import typing
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from typing import Any, ClassVar

from playground.errors import PlaygroundError

SCHEMA_VERSION = 1


class ResultsError(PlaygroundError):
    """A results file or directory cannot be used; the message says why."""


class ModelError(ResultsError):
    """A results file does not fit the model; the message names where and why."""


def _doc(text: str, default: Any = None, factory: Any = None, *, omit_none: bool = False) -> Any:
    """A field with its description for the schema table; ``omit_none``: not written when None
    (a key only some runs have)."""
    metadata = {"doc": text, "omit_none": omit_none}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class Finding:
    """One thing the diagnosis says about an entry (see :mod:`playground.bench.diagnosis`)."""

    code: str = _doc("stable identifier of the rule, e.g. `syn-retransmit`, `cpu-bound`", "")
    severity: str = _doc(
        "`error` (the figures are not trustworthy), `warning` (a limit was "
        "hit) or `info` (an explanation)",
        "info",
    )
    message: str = _doc("the plain-language sentence the report shows", "")
    figures: dict[str, Any] = _doc("the measured figures the rule read, by name", factory=dict)


@dataclass(frozen=True)
class Sample:
    """The server's processes at one moment of the load, as `top -H` shows them."""

    t: float = _doc("seconds since the load started", 0.0)
    threads: int = _doc("OS threads of every process of the server", 0)
    processes: int = _doc("processes of the server", 0)
    rss_mb: float = _doc("resident memory of those processes, MB", 0.0)
    cpu_pct: float = _doc("CPU since the previous sample, 100 = one core busy", 0.0)


@dataclass(frozen=True)
class Repeat:
    """One of `--repeat` measurements of the same load."""

    rps: float | None = _doc("the load tool's requests/s")
    steady_rps: float | None = _doc(
        "steady requests/s, None where the run never reached a steady state"
    )
    time_taken_s: float | None = _doc("the load tool's run time, s")
    failed: int | None = _doc("failed requests")
    non_2xx: int | None = _doc("non-2xx answers")


@dataclass(frozen=True)
class Spread:
    """How far `--repeat` measurements of one load lie apart."""

    rps: list[float] | None = _doc("[min, max] of rps over the repeats")
    steady_rps: list[float] | None = _doc("[min, max] of steady_rps over the repeats")
    relative: float | None = _doc(
        "(max - min) / median of the headline figure (steady_rps, else rps); None with one repeat"
    )


@dataclass
class Entry:
    """One measurement: a target at one load (or the error that prevented it)."""

    SECTION: ClassVar[str] = "entry"

    # What was loaded, and how.
    name: str = _doc("target name from the registry", "")
    title: str | None = _doc("human title of the target")
    kind: str = _doc(
        "scenario, calibration, variant, demo, probe, ... (the report's section)", "scenario"
    )
    compose_file: str | None = _doc("the compose file the target runs from")
    service: str | None = _doc("the service the load is aimed at")
    url: str | None = _doc("URL the load tool requested")
    requests: int | None = _doc("ab -n")
    concurrency: int = _doc("ab/wrk -c", 0)
    delay: float | None = _doc("upstream delay, s")
    tool: str | None = _doc("ab, wrk or wrk-t12")
    published: str | None = _doc("a demo's published figure, as text")
    # Ceilings the figures are read against.
    ideal_rps: float | None = _doc("c / delay: a fully parallel server's rate")
    ab_cap_rps: float | None = _doc("n / ((n/c + 1) x delay): the most ab can report (ab only)")
    tutorial_rps: float | None = _doc("the tutorial's figure, at the tutorial's own load only")
    tutorial_time_s: float | None = _doc("the tutorial's time taken, at its own load only")
    # Throughput.
    rps: float | None = _doc("the load tool's requests/s (median over repeats): measured")
    time_taken_s: float | None = _doc("the load tool's run time (median over repeats), s")
    steady_rps: float | None = _doc(
        "c / mean response time, only where the run reached a steady "
        "state (see `waves`) with few enough error answers "
        "(`diagnosis.MAX_ERROR_SHARE`); None "
        "otherwise, with a `no-steady-state` or `errors-in-steady` "
        "finding saying why"
    )
    waves: float | None = _doc(
        "response times the run lasted (time_taken_s / mean response time "
        "from the per-request file); a steady figure needs enough of them"
    )
    efficiency: float | None = _doc("steady_rps / ideal_rps")
    # Errors.
    failed: int | None = _doc("failed requests (the tool's count of failure events)")
    non_2xx: int | None = _doc("non-2xx answers")
    failures: dict[str, int] | None = _doc(
        "failures by kind (ab: connect, receive, length, "
        "exceptions; wrk: connect, read, write, timeout)"
    )
    # Latency.
    latency_ms: dict[str, float | None] = _doc("p50, p90, p99, max, ms", factory=dict)
    mean_latency_ms: float | None = _doc("mean response time from the per-request file, ms")
    latency_distribution_ms: list[list[float]] = _doc(
        "[percent, ms] pairs from every request's response time (ab's -g file), for the "
        "distribution chart",
        factory=list,
    )
    connect_max_ms: float | None = _doc(
        "slowest TCP connect, ms; from `verdicts.SYN_RETRANSMIT_MS` on, a SYN retransmit where "
        "ab's per-request file shows a gap of about a second between connect times or there is "
        "no such file, otherwise the finding `slow-connects`"
    )
    # What `top -H` shows.
    threads_before: int | None = _doc("threads before the load")
    threads_peak: int | None = _doc("most threads during the load")
    threads_after: int | None = _doc("threads at the end of the load")
    processes: int | None = _doc("most processes during the load")
    rss_before_mb: float | None = _doc("resident memory before the load, MB")
    rss_peak_mb: float | None = _doc("most resident memory during the load, MB")
    rss_per_request_kb: float | None = _doc(
        "(peak - before) RSS / c: memory per request in flight, kB"
    )
    cpu_peak_pct: float | None = _doc("highest CPU sample, 100 = one core")
    cpu_seconds: float | None = _doc("CPU time the server used during the load, s")
    cpu_ms_per_request: float | None = _doc("cpu_seconds / requests served, ms")
    loadgen_cpu_peak_pct: float | None = _doc("the load generator's highest CPU sample")
    loadgen_saturated: bool | None = _doc(
        "the load generator used a whole core: its limit, not the server's, was measured"
    )
    # Verdict.
    valid: bool = _doc("no failures, no non-2xx, no saturation, no restart", False)
    invalid_reasons: list[str] = _doc("why the entry is not valid", factory=list)
    findings: list[Finding] = _doc(
        "structured diagnoses (code, severity, message, figures)", factory=list
    )
    notes: list[str] = _doc(
        "the target's own notes, then every finding's message (for readers of older files)",
        factory=list,
    )
    commands: dict[str, str | None] = _doc(
        "up, load, host_load, threads, down: what a reader types to repeat it", factory=dict
    )
    repeats: list[Repeat] = _doc("each of the --repeat measurements", factory=list)
    spread: Spread | None = _doc("the spread over the repeats")
    samples: list[Sample] = _doc(
        "the server's threads/RSS/CPU every 0.5 s through the load (the median repeat)",
        factory=list,
    )
    error: str | None = _doc("why the entry could not be measured")
    skipped: bool = _doc("not run: the mode had stopped scaling at a lower concurrency", False)
    # Verdicts, decided once when measured (playground.verdicts.verdicts).
    shape: str | None = _doc(
        "serialised, capped or concurrent: how many of c sleeping requests the server held at "
        "once (`verdicts.overlap`); absent with no sleep, no figures or an error",
        omit_none=True,
    )
    keeps_scaling: bool | None = _doc(
        "valid and at least `verdicts.SCALE_GOOD` of the ideal: the mode kept scaling at this "
        "c; absent in files written before it was stored (it is decided when they are read)",
        omit_none=True,
    )
    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> tuple[str, int]:
        return (self.name, int(self.concurrency))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = _to_json(self)
        return out

    @classmethod
    def from_json(cls, data: Any, *, where: str = "entry") -> Entry:
        entry: Entry = _from_json(cls, data, where)
        return entry


@dataclass
class RunHeader:
    """What every run file starts with: when, with what command, on which machine."""

    schema_version: int = _doc("results file format version", SCHEMA_VERSION)
    run_id: str = _doc("the run's folder name under results/", "")
    started_at: str | None = _doc("ISO time the run started")
    finished_at: str | None = _doc("ISO time it finished; null: interrupted or still running")
    command: str | None = _doc("the command line that made the run")
    environment: dict[str, Any] = _doc(
        "git commit, images, versions, cpu_count, kernel ...", factory=dict
    )
    settings: dict[str, Any] = _doc(
        "the run's options (requests, concurrency, sweep, scale ...)", factory=dict
    )
    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = _to_json(self)
        return out


@dataclass
class Run(RunHeader):
    """One `playground run` or `playground scale`: its header and its entries."""

    calibration: Entry | None = _doc("ab straight at the upstream: the harness ceiling")
    scenarios: list[Entry] = _doc("every other entry, in the order measured", factory=list)
    probe: Entry | None = _doc(
        "scale runs only: the measurement that set the delays", omit_none=True
    )

    def entries(self) -> list[Entry]:
        """Calibration first (every row is read against it), then the rest."""
        return ([self.calibration] if self.calibration else []) + list(self.scenarios)

    @classmethod
    def from_json(cls, data: Any, *, where: str = "results") -> Run:
        if not isinstance(data, dict):
            raise ModelError(f"{where}: expected a JSON object, got {type(data).__name__}")
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ModelError(
                f"{where}: schema_version {version!r}; this version of playground "
                f"reads schema {SCHEMA_VERSION}"
            )
        run: Run = _from_json(cls, data, where)
        return run


# --- one conversion for every dataclass above ---------------------------------------------------
def _to_json(obj: Any) -> Any:
    if is_dataclass(obj):
        out = {
            f.name: _to_json(getattr(obj, f.name))
            for f in fields(obj)
            if f.name != "extra"
            and not (f.metadata.get("omit_none") and getattr(obj, f.name) is None)
        }
        out.update(getattr(obj, "extra", {}))
        return out
    if isinstance(obj, list):
        return [_to_json(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _to_json(v) for k, v in obj.items()}
    return obj


def _from_json(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise ModelError(f"{where}: expected an object, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in fields(cls) if f.name != "extra"}
    label = where
    if isinstance(data.get("name"), str):
        label = f"{where} {data['name']!r}"
    kwargs: dict[str, Any] = {}
    for name, f in known.items():
        if name in data:
            kwargs[name] = _convert(hints[name], data[name], f"{label}: {name!r}")
        elif f.default is MISSING and f.default_factory is MISSING:  # pragma: no cover
            raise ModelError(f"{label}: missing {name!r}")
    if "extra" in {f.name for f in fields(cls)}:
        kwargs["extra"] = {k: v for k, v in data.items() if k not in known}
    return cls(**kwargs)


def _convert(hint: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in (o for o in options if o is not type(None)):
            try:
                return _convert(option, value, where)
            except ModelError as exc:
                errors.append(str(exc))
        raise ModelError(errors[0])
    if hint is Any:
        return value
    if isinstance(hint, type) and is_dataclass(hint):
        return _from_json(hint, value, where)
    if origin is list:
        if not isinstance(value, list):
            raise ModelError(f"{where} should be a list, got {value!r:.60}")
        (item,) = typing.get_args(hint)
        return [_convert(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ModelError(f"{where} should be an object, got {value!r:.60}")
        _, item = typing.get_args(hint)
        return {k: _convert(item, v, f"{where}.{k}") for k, v in value.items()}
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


# --- the schema table -----------------------------------------------------------------------------
def _type_name(hint: Any) -> str:
    text = str(hint).replace("<class '", "").replace("'>", "").replace("NoneType", "null")
    return re.sub(r"[\w.]+\.(\w+)", r"\1", text)


def schema_markdown() -> str:
    """docs/results-schema.md, generated from the dataclasses' field descriptions."""
    lines = [
        "# results.json schema",
        "",
        f"Schema version {SCHEMA_VERSION}. Generated from `src/playground/model.py` by",
        "`python -m playground.model > docs/results-schema.md`; a unit test checks it is",
        "current. A key missing from an older file reads as null; keys this version does",
        "not know are kept as they are.",
        "",
        "Changes from files written before the typed model (same schema version: every",
        "key they have still means the same, except `steady_rps`):",
        "",
        "- `steady_rps` is null where the run did not reach a steady state (fewer than",
        "  `verdicts.MIN_STEADY_WAVES` response times long, see `waves`) or where more",
        "  than `diagnosis.MAX_ERROR_SHARE` of the answers were errors; earlier files",
        "  hold c / mean response time for every ab run, which overstates short runs",
        "  (the serial dev server at n=10 c=5: 1.4 against 0.98 served). `efficiency`",
        "  follows it. `repeats[].steady_rps` likewise.",
        "- New: `findings` (the diagnosis, structured; `notes` still carries their",
        "  messages after the target's own notes), `waves`, `latency_distribution_ms`,",
        "  `spread.relative`, `skipped` on every entry.",
        "- Gone: `results.REQUIRED_KEYS`; the model is the schema.",
        "",
    ]
    from playground import storymodel  # it builds on this module

    bench: tuple[tuple[type, str], ...] = (
        (Run, "Run (the whole file of a bench or scale run)"),
        (Entry, "Entry (`calibration`, each of `scenarios`, `probe`)"),
        (Finding, "Finding (each of `findings`, in every kind of run)"),
        (Repeat, "Repeat (each of `repeats`)"),
        (Spread, "Spread (`spread`)"),
        (Sample, "Sample (each of `samples`)"),
    )
    story_intro = [
        "# A story run (`playground story`)",
        "",
        "The same file, `results/<run-id>/results.json`, with `kind` `story`: the header",
        "above (`settings` is empty: the story's are `story`), then the incident's",
        "settings, one entry per target and the sweep (`src/playground/storymodel.py`).",
        "",
    ]
    for cls, heading in (*bench, *storymodel.SCHEMA_CLASSES):
        if cls is storymodel.StoryRun:
            lines += story_intro
        hints = typing.get_type_hints(cls)
        lines += [f"## {heading}", "", "| key | type | meaning |", "|---|---|---|"]
        for f in fields(cls):
            if f.name == "extra":
                continue
            lines.append(
                f"| `{f.name}` | {_type_name(hints[f.name]).replace('|', 'or')} | "
                f"{f.metadata.get('doc', '')} |"
            )
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(schema_markdown(), end="")
