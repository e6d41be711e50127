"""The results model: one JSON form, old files load, bad files fail clearly, the schema doc is
generated from it."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest

from playground.commands.schema import schema_markdown
from playground.core.jsonmodel import ModelError
from playground.core.results import Entry, Finding, Run, with_kind

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


def recorded() -> dict:
    return json.loads((DATA / "results_recorded.json").read_text())


def test_a_recorded_run_round_trips_unchanged():
    data = with_kind(recorded())  # written before every file named its kind
    run = Run.from_json(data)
    assert run.to_json() == data and data["kind"] == "bench"
    assert isinstance(run.scenarios[0], Entry)
    assert all(isinstance(f, Finding) for e in run.entries() for f in e.findings)


def test_attributes_are_the_json_keys():
    data = recorded()
    entry = Run.from_json(data).scenarios[0]
    raw = data["scenarios"][0]
    for key in (
        "rss_per_request_kb",
        "cpu_ms_per_request",
        "steady_rps",
        "kind",
        "name",
        "concurrency",
        "latency_ms",
        "threads_peak",
    ):
        assert key in raw
        value = getattr(entry, key)
        assert value == raw[key]


def test_an_older_entry_without_newer_keys_loads_with_nulls():
    old = {"name": "devserver", "concurrency": 5, "kind": "scenario", "rps": 0.99, "valid": True}
    entry = Entry.from_json(old)
    assert entry.rps == 0.99 and entry.findings == [] and entry.cpu_ms_per_request is None
    assert entry.waves is None and entry.latency_distribution_ms == []


def test_unknown_keys_survive_a_round_trip():
    entry = Entry.from_json({"name": "x", "concurrency": 1, "from_the_future": [1, 2]})
    assert entry.to_json()["from_the_future"] == [1, 2]


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("concurrency", "many", "'concurrency' should be a whole number"),
        ("steady_rps", "fast", "'steady_rps' should be a number"),
        ("valid", "yes", "'valid' should be true or false"),
        ("findings", {"code": "x"}, "'findings' should be a list"),
        ("latency_ms", [1, 2], "'latency_ms' should be an object"),
    ],
)
def test_a_wrong_type_names_the_entry_and_the_key(key, value, message):
    with pytest.raises(ModelError, match=rf"entry 'devserver': {message}"):
        Entry.from_json({"name": "devserver", "concurrency": 5, key: value})


def test_another_schema_version_is_refused_clearly():
    with pytest.raises(ModelError, match="schema_version 7; this version of playground reads"):
        Run.from_json({"schema_version": 7})


def test_the_schema_document_is_generated_from_the_model():
    doc = (ROOT / "docs" / "results-schema.md").read_text()
    assert doc == schema_markdown(), (
        "regenerate: python -m playground.commands.schema > docs/results-schema.md"
    )
    for name in (f.name for f in fields(Entry) if f.name != "extra"):
        assert f"| `{name}` |" in doc


def test_a_bench_and_a_scale_run_keep_their_settings_as_the_header_always_had_them():
    """One typed home for the settings of both commands: the keys, and their order, of the
    files written before (`scale` null until the probe, `--pin-cpus` last), read back."""
    from dataclasses import replace

    from playground.bench.scale import scale_settings
    from playground.core.jsonmodel import to_json
    from playground.core.results import BenchSettings, ScaleRunSettings

    keys = ["requests", "concurrency", "delay", "tool", "repeat", "sweep", "from_host"]
    run = to_json(BenchSettings(tool="wrk", extra={"pin_cpus": "app services on CPU 1"}))
    assert list(run) == [*keys, "pin_cpus"]
    scale = ScaleRunSettings(sweep=[100, 1000], extra={"pin_cpus": "x"})
    assert list(to_json(scale)) == [*keys, "scale", "pin_cpus"]
    assert to_json(scale)["scale"] is None
    chosen = scale_settings(cpu_ms=2.0, sweep=(100, 1000), utilisation=0.25, probe="p")
    on_disk = json.loads(json.dumps(to_json(replace(scale, scale=chosen))))
    assert on_disk["scale"]["delays"] == {"100": 1.0, "1000": 8.0}
    back = ScaleRunSettings.from_json(on_disk)
    assert back.scale == chosen and back.extra == {"pin_cpus": "x"}


def test_the_header_is_typed_and_written_back_key_for_key():
    """Every recorded run's settings and environment are models now, read by attribute, and
    written back exactly as they were (keys, order, values)."""
    from playground.commands.kinds import load_run
    from playground.core.results import BenchSettings, Environment

    for name in ("results_recorded.json", "results_sweep.json", "story_results_recorded.json"):
        data = json.loads((DATA / name).read_text())
        run = load_run(DATA / name)
        assert isinstance(run.environment, Environment)
        assert run.environment.cpu_count == data["environment"]["cpu_count"]
        out = run.to_json()
        assert json.dumps(out["environment"]) == json.dumps(data["environment"])
        assert json.dumps(out["settings"]) == json.dumps(data["settings"])
    sweep = Run.from_json(json.loads((DATA / "results_sweep.json").read_text()))
    assert isinstance(sweep.settings, BenchSettings) and sweep.settings.sweep == [10, 50]


def test_the_kind_of_settings_is_chosen_by_their_keys():
    from playground.core.results import BenchSettings, ScaleRunSettings

    header = {"schema_version": 1, "scenarios": []}
    bench = Run.from_json({**header, "settings": {"tool": "wrk", "pin_cpus": "x"}})
    assert type(bench.settings) is BenchSettings and bench.settings.extra == {"pin_cpus": "x"}
    scale = Run.from_json({**header, "settings": {"sweep": [100], "scale": None}})
    assert type(scale.settings) is ScaleRunSettings and scale.settings.scale is None
    assert Run.from_json(header).settings is None and Run.from_json(header).environment is None


@pytest.mark.parametrize("delay", [1, 1.0, 0.5])
def test_a_number_setting_keeps_whole_or_not_as_it_was_read(delay):
    """The report prints 1 and 1.0 differently: a setting must come back as it was written."""
    data = {"schema_version": 1, "scenarios": [], "settings": {"delay": delay}}
    run = Run.from_json(data)
    assert run.settings is not None
    assert type(run.settings.delay) is type(delay) and run.settings.delay == delay
    assert json.dumps(run.to_json()["settings"]["delay"]) == json.dumps(delay)


@pytest.mark.parametrize("delay", [True, "1", float("nan")])
def test_a_number_setting_refuses_what_is_not_a_number(delay):
    data = {"schema_version": 1, "scenarios": [], "settings": {"delay": delay}}
    with pytest.raises(ModelError, match="'delay' should be a number"):
        Run.from_json(data)
