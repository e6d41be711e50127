"""The results model: what one run measured, as typed objects with one JSON form.

`results.json` is the serialised :class:`Run`; each measurement is an :class:`Entry`. Attribute
names are the JSON keys, so ``entry["steady_rps"]`` in old code is ``entry.steady_rps`` here.
:meth:`Run.from_json` is the one place a file is checked: a missing key becomes None (files
written before a key existed still load), a value of the wrong type is a clear
:class:`ModelError` naming the entry and the key, and keys this version does not know are kept
(``extra``) and written back unchanged (the machinery: :mod:`playground.core.jsonmodel`).

The schema table in ``docs/results-schema.md`` is generated from the field descriptions below:
``python -m playground.commands.schema > docs/results-schema.md`` (a unit test checks it is current).
Every kind of run starts with :class:`RunHeader`: its :class:`Environment`, and its settings as
the kind's own model (a bench run's :class:`BenchSettings`, a scale run's
:class:`ScaleRunSettings`; a fault run's records and settings are
:mod:`playground.faults.results`'s, a story's :mod:`playground.incident.storyresults`'s).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from playground.core import jsonmodel
from playground.core.jsonmodel import ModelError, Number, doc

SCHEMA_VERSION = 1
#: The file a bench, scale or story run is kept in, in its folder under results/.
RESULTS_FILE = "results.json"


@dataclass(frozen=True)
class Finding:
    """One thing the diagnosis says about an entry (see :mod:`playground.bench.diagnosis`)."""

    code: str = doc("stable identifier of the rule, e.g. `syn-retransmit`, `cpu-bound`", "")
    severity: str = doc(
        "`error` (the figures are not trustworthy), `warning` (a limit was "
        "hit) or `info` (an explanation)",
        "info",
    )
    message: str = doc("the plain-language sentence the report shows", "")
    figures: dict[str, Any] = doc("the measured figures the rule read, by name", factory=dict)


@dataclass(frozen=True)
class Sample:
    """The server's processes at one moment of the load, as `top -H` shows them."""

    t: float = doc("seconds since the load started", 0.0)
    threads: int = doc("OS threads of every process of the server", 0)
    processes: int = doc("processes of the server", 0)
    rss_mb: float = doc("resident memory of those processes, MB", 0.0)
    cpu_pct: float = doc("CPU since the previous sample, 100 = one core busy", 0.0)


@dataclass(frozen=True)
class Repeat:
    """One of `--repeat` measurements of the same load."""

    rps: float | None = doc("the load tool's requests/s")
    steady_rps: float | None = doc(
        "steady requests/s, None where the run never reached a steady state"
    )
    time_taken_s: float | None = doc("the load tool's run time, s")
    failed: int | None = doc("failed requests")
    non_2xx: int | None = doc("non-2xx answers")


@dataclass(frozen=True)
class Spread:
    """How far `--repeat` measurements of one load lie apart."""

    rps: list[float] | None = doc("[min, max] of rps over the repeats")
    steady_rps: list[float] | None = doc("[min, max] of steady_rps over the repeats")
    relative: float | None = doc(
        "(max - min) / median of the headline figure (steady_rps, else rps); None with one repeat"
    )


@dataclass
class Entry:
    """One measurement: a target at one load (or the error that prevented it)."""

    SECTION: ClassVar[str] = "entry"

    # What was loaded, and how.
    name: str = doc("target name from the registry", "")
    title: str | None = doc("human title of the target")
    kind: str = doc(
        "scenario, calibration, variant, demo, probe, ... (the report's section)", "scenario"
    )
    compose_file: str | None = doc("the compose file the target runs from")
    service: str | None = doc("the service the load is aimed at")
    url: str | None = doc("URL the load tool requested")
    requests: int | None = doc("ab -n")
    concurrency: int = doc("ab/wrk -c", 0)
    delay: float | None = doc("upstream delay, s")
    tool: str | None = doc("ab, wrk or wrk-t12")
    published: str | None = doc("a demo's published figure, as text")
    # Ceilings the figures are read against.
    ideal_rps: float | None = doc("c / delay: a fully parallel server's rate")
    ab_cap_rps: float | None = doc("n / ((n/c + 1) x delay): the most ab can report (ab only)")
    tutorial_rps: float | None = doc("the tutorial's figure, at the tutorial's own load only")
    tutorial_time_s: float | None = doc("the tutorial's time taken, at its own load only")
    # Throughput.
    rps: float | None = doc("the load tool's requests/s (median over repeats): measured")
    time_taken_s: float | None = doc("the load tool's run time (median over repeats), s")
    steady_rps: float | None = doc(
        "c / mean response time, only where the run reached a steady "
        "state (see `waves`) with few enough error answers "
        "(`diagnosis.MAX_ERROR_SHARE`); None "
        "otherwise, with a `no-steady-state` or `errors-in-steady` "
        "finding saying why"
    )
    waves: float | None = doc(
        "response times the run lasted (time_taken_s / mean response time "
        "from the per-request file); a steady figure needs enough of them"
    )
    efficiency: float | None = doc("steady_rps / ideal_rps")
    # Errors.
    failed: int | None = doc("failed requests (the tool's count of failure events)")
    non_2xx: int | None = doc("non-2xx answers")
    failures: dict[str, int] | None = doc(
        "failures by kind (ab: connect, receive, length, "
        "exceptions; wrk: connect, read, write, timeout)"
    )
    # Latency.
    latency_ms: dict[str, float | None] = doc("p50, p90, p99, max, ms", factory=dict)
    mean_latency_ms: float | None = doc("mean response time from the per-request file, ms")
    latency_distribution_ms: list[list[float]] = doc(
        "[percent, ms] pairs from every request's response time (ab's -g file), for the "
        "distribution chart",
        factory=list,
    )
    connect_max_ms: float | None = doc(
        "slowest TCP connect, ms; from `verdicts.SYN_RETRANSMIT_MS` on, a SYN retransmit where "
        "ab's per-request file shows a gap of about a second between connect times or there is "
        "no such file, otherwise the finding `slow-connects`"
    )
    # What `top -H` shows.
    threads_before: int | None = doc("threads before the load")
    threads_peak: int | None = doc("most threads during the load")
    threads_after: int | None = doc("threads at the end of the load")
    processes: int | None = doc("most processes during the load")
    rss_before_mb: float | None = doc("resident memory before the load, MB")
    rss_peak_mb: float | None = doc("most resident memory during the load, MB")
    rss_per_request_kb: float | None = doc(
        "(peak - before) RSS / c: memory per request in flight, kB"
    )
    cpu_peak_pct: float | None = doc("highest CPU sample, 100 = one core")
    cpu_seconds: float | None = doc("CPU time the server used during the load, s")
    cpu_ms_per_request: float | None = doc("cpu_seconds / requests served, ms")
    loadgen_cpu_peak_pct: float | None = doc("the load generator's highest CPU sample")
    loadgen_saturated: bool | None = doc(
        "the load generator used a whole core: its limit, not the server's, was measured"
    )
    # Verdict.
    valid: bool = doc("no failures, no non-2xx, no saturation, no restart", False)
    invalid_reasons: list[str] = doc("why the entry is not valid", factory=list)
    findings: list[Finding] = doc(
        "structured diagnoses (code, severity, message, figures)", factory=list
    )
    notes: list[str] = doc(
        "the target's own notes, then every finding's message (for readers of older files)",
        factory=list,
    )
    commands: dict[str, str | None] = doc(
        "up, load, host_load, threads, down: what a reader types to repeat it", factory=dict
    )
    repeats: list[Repeat] = doc("each of the --repeat measurements", factory=list)
    spread: Spread | None = doc("the spread over the repeats")
    samples: list[Sample] = doc(
        "the server's threads/RSS/CPU every 0.5 s through the load (the median repeat)",
        factory=list,
    )
    error: str | None = doc("why the entry could not be measured")
    skipped: bool = doc("not run: the mode had stopped scaling at a lower concurrency", False)
    # Verdicts, decided once when measured (playground.core.verdicts.verdicts).
    shape: str | None = doc(
        "serialised, capped or concurrent: how many of c sleeping requests the server held at "
        "once (`verdicts.overlap`); absent with no sleep, no figures or an error",
        omit_none=True,
    )
    keeps_scaling: bool | None = doc(
        "valid and at least `verdicts.SCALE_GOOD` of the ideal: the mode kept scaling at this "
        "c; absent in files written before it was stored (it is decided when they are read)",
        omit_none=True,
    )
    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> tuple[str, int]:
        return (self.name, int(self.concurrency))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = jsonmodel.to_json(self)
        return out

    @classmethod
    def from_json(cls, data: Any, *, where: str = "entry") -> Entry:
        entry: Entry = jsonmodel.from_json(cls, data, where)
        return entry


@dataclass(frozen=True)
class BenchSettings:
    """The options of a `playground run`, as its header's `settings` keeps them."""

    requests: int | None = doc("-n: requests per load (null: each target's own)")
    concurrency: int | None = doc("-c: concurrent clients (null: each target's own)")
    delay: Number | None = doc("--delay: upstream delay, s (null: each target's own)")
    tool: str = doc("--tool: ab, wrk or wrk-t12", "ab")
    repeat: int = doc("--repeat: measurements of each load", 1)
    sweep: list[int] | None = doc("--sweep: the concurrencies, if any")
    from_host: bool = doc("--from-host: the load generator ran on the host", False)
    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def fits(cls, data: Any) -> bool:
        """A run's settings are a scale run's when they have `scale` (null before the probe)."""
        return isinstance(data, dict) and "scale" not in data

    @classmethod
    def from_json(cls, data: Any, *, where: str = "settings") -> Self:
        settings: Self = jsonmodel.from_json(cls, data, where)
        return settings


@dataclass(frozen=True)
class ScaleSettings:
    """What a scale run's probe measured, and the delays it chose."""

    probe: str | None = doc("the scenario whose CPU per request set the delays")
    cpu_ms_per_request: Number | None = doc("the probe's CPU per request, ms")
    utilisation: Number | None = doc("--utilisation: the share of one core the ideal rate may use")
    rate: Number | None = doc("requests/s the ideal c / delay may reach: `utilisation` of one core")
    delays: dict[str, Number] = doc("the delay at each concurrency, s, by c", factory=dict)


@dataclass(frozen=True)
class ScaleRunSettings(BenchSettings):
    """The options of a `playground scale`: a run's, then what the probe chose."""

    scale: ScaleSettings | None = doc("null until the probe has run")

    @classmethod
    def fits(cls, data: Any) -> bool:
        return isinstance(data, dict) and "scale" in data


@dataclass(frozen=True)
class Environment:
    """What a run was measured on (``playground.core.environment.collect``), so two runs can be
    compared: a measured run (bench, scale, story) has every key; a fault run keeps the CPUs
    and Docker's versions, a prediction the CPUs and Python (the keys it lacks are absent, or
    null where a measured run can have null too)."""

    git_commit: str | None = doc("the checkout's commit (null: not a git checkout, or not kept)")
    git_dirty: bool | None = doc("uncommitted changes in the checkout (null: not known)")
    cpu_count: int | None = doc("CPUs the host has")
    kernel: str | None = doc("the host's kernel release", omit_none=True)
    platform: str | None = doc(
        "the host's platform, Python's `platform.platform()`", omit_none=True
    )
    python: str | None = doc("the runner's Python version", omit_none=True)
    docker_version: str | None = doc("the Docker server's version", omit_none=True)
    compose_version: str | None = doc("Docker Compose's version", omit_none=True)
    load_tool: str | None = doc("the load tool: ab, wrk, wrk-t12 or openloop", omit_none=True)
    load_tool_version: str | None = doc("its version, as it prints it (null: not known)")
    images: dict[str, str | None] | None = doc(
        "each image's id, by name (null: not built)", omit_none=True
    )
    base_images: dict[str, str] | None = doc(
        "the base images from `.env`, by variable", omit_none=True
    )
    packages: dict[str, str] | None = doc(
        "the pinned Python packages inside the images, by name", omit_none=True
    )
    hostname: str | None = doc("the host's name", omit_none=True)
    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class RunHeader:
    """What every run file starts with: when, with what command, on which machine."""

    FILE: ClassVar[str] = RESULTS_FILE

    schema_version: int = doc("results file format version", SCHEMA_VERSION)
    run_id: str = doc("the run's folder name under results/", "")
    started_at: str | None = doc("ISO time the run started")
    finished_at: str | None = doc("ISO time it finished; null: interrupted or still running")
    command: str | None = doc("the command line that made the run")
    environment: Environment | None = doc("what the run was measured on (null: not recorded)")
    #: Each kind of run declares its own settings model (``Run``, ``StoryRun``, ``FaultsRun``).
    settings: object = doc("the run's options, a model per kind (null: not recorded)")
    #: Each kind of run gives its own word as the default.
    kind: str = doc(
        "the kind of run, by its word in the registry of kinds: `bench`, `scale`, `faults`, "
        "`story`, `predict` or `swarm`",
        "",
    )
    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = jsonmodel.to_json(self)
        return out


def with_kind(data: dict[str, Any]) -> dict[str, Any]:
    """A results file's or a run record's JSON with its `kind` named, the one rule that reads a
    file written before every file named its kind: without a `kind`, a bench run's (a scale
    run's where its settings have `scale`), or a fault run's where it has `runs`; a story run's
    with `predicted` true is a prediction (`predict`), and one whose id ends in `-swarm` ran on
    a Swarm stack (`swarm`). A file that names its kind is returned as it is."""
    kind = data.get("kind")
    if kind is None and "runs" in data:
        kind = "faults"
    elif kind is None:
        settings = data.get("settings")
        kind = "scale" if isinstance(settings, dict) and "scale" in settings else "bench"
    elif kind == "story" and data.get("predicted"):
        kind = "predict"
    elif kind == "story" and str(data.get("run_id", "")).endswith("-swarm"):
        kind = "swarm"
    else:
        return data
    return {k: v for k, v in data.items() if k != "predicted"} | {"kind": kind}


@dataclass
class Run(RunHeader):
    """One `playground run` or `playground scale`: its header and its entries."""

    settings: ScaleRunSettings | BenchSettings | None = doc(
        "the run's options: a bench run's, or a scale run's (with `scale`); null: not recorded"
    )
    kind: str = doc("`bench` (`playground run`) or `scale` (`playground scale`)", "bench")
    calibration: Entry | None = doc("ab straight at the upstream: the harness ceiling")
    scenarios: list[Entry] = doc("every other entry, in the order measured", factory=list)
    probe: Entry | None = doc(
        "scale runs only: the measurement that set the delays", omit_none=True
    )

    def done(self) -> set[tuple[str, int]]:
        """The measurements finished (an error is not: a resumed run tries it again)."""
        return {e.key for e in self.entries() if not e.error}

    def record(self, entry: Entry) -> None:
        """A finished measurement: the calibration, or one more entry (a resumed run's replaces
        the failed attempt of the same measurement)."""
        if entry.kind == "calibration":
            self.calibration = entry
            return
        self.scenarios = [e for e in self.scenarios if e.key != entry.key]
        self.scenarios.append(entry)

    def set_probe(self, name: str) -> Entry:
        """The entry ``name`` is the scale run's probe, a measurement of the machine rather than a
        point of the sweep: moved from the scenarios to ``probe``."""
        entry = next(e for e in self.scenarios if e.name == name)
        self.scenarios.remove(entry)
        self.probe = entry
        return entry

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
        run: Run = jsonmodel.from_json(cls, data, where)
        return run


SCHEMA_CLASSES: tuple[tuple[type, str], ...] = (
    (Run, "Run (the whole file of a bench or scale run)"),
    (Environment, "Environment (`environment` of every kind of run)"),
    (BenchSettings, "BenchSettings (`settings` of a `playground run`; `pin_cpus` last)"),
    (ScaleRunSettings, "ScaleRunSettings (`settings` of a `playground scale`)"),
    (ScaleSettings, "ScaleSettings (`settings.scale`)"),
    (Entry, "Entry (`calibration`, each of `scenarios`, `probe`)"),
    (Finding, "Finding (each of `findings`, in every kind of run)"),
    (Repeat, "Repeat (each of `repeats`)"),
    (Spread, "Spread (`spread`)"),
    (Sample, "Sample (each of `samples`)"),
)
