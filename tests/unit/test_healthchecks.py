"""Docker's health checks in the model (predict/healthchecks.py): read from the compose files,
sent through nginx, HAProxy or straight to the app one at a time, each asking for no delay."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from playground.core.scenarios import resolve_story
from playground.incident.settings import StorySettings
from playground.predict import healthchecks, run, system
from playground.predict.run import predict_target, simulate
from playground.predict.system import system_for


def _checks(name: str) -> dict[str, healthchecks.Check]:
    checks = system_for(resolve_story([name])[0], StorySettings()).checks
    return {c.entry: c for c in checks}


def test_the_storys_checks_are_nginxs_and_the_apps_and_haproxys_where_it_stands_between():
    plain = _checks("uwsgi-threads")
    assert sorted(plain) == ["app", "nginx"]
    assert plain["nginx"].interval_s == 2.0 and plain["nginx"].timeout_s == 6.0
    # common/healthcheck.py's own socket gives up before Docker does.
    assert plain["app"].timeout_s == healthchecks.CHECK_PY_TIMEOUT_S < 6.0
    assert sorted(_checks("gunicorn-threads+haproxy")) == ["app", "haproxy", "nginx"]


def _files(tmp_path: Path, override: dict) -> list[Path]:
    base = {
        "services": {
            "ingress": {"healthcheck": {"test": ["CMD", "true"], "interval": "${GAP:-500ms}"}},
            "flask_app": {"extends": {"file": "common.yml", "service": "flask_app"}},
        }
    }
    common = {"services": {"flask_app": {"healthcheck": {"test": ["CMD", "x"], "timeout": "1m"}}}}
    (tmp_path / "common.yml").write_text(yaml.safe_dump(common))
    (tmp_path / "base.yml").write_text(yaml.safe_dump(base))
    (tmp_path / "over.yml").write_text(yaml.safe_dump({"services": override}))
    return [tmp_path / "base.yml", tmp_path / "over.yml"]


def test_a_check_is_read_through_extends_and_an_override_replaces_or_disables_it(tmp_path):
    def read(override: dict) -> dict[str, healthchecks.Check]:
        paths = _files(tmp_path, override)
        found = healthchecks.read(paths, lambda v: system._substitute(v, {}), system._compose)
        system._compose.cache_clear()
        return {c.entry: c for c in found}

    got = read({})
    assert got["nginx"].interval_s == 0.5 and got["nginx"].timeout_s == 30.0  # Docker's default
    assert got["app"].timeout_s == 60.0 and got["app"].interval_s == 30.0
    assert "app" not in read({"flask_app": {"healthcheck": {"disable": True}}})
    assert "nginx" not in read({"ingress": {"healthcheck": {"test": ["NONE"]}}})
    assert (
        read({"ingress": {"healthcheck": {"test": ["CMD", "y"], "interval": "1m30s"}}})[
            "nginx"
        ].interval_s
        == 90.0
    )


@pytest.mark.parametrize("text", ["2", "2 s", "s", "2sx"])
def test_a_duration_compose_would_refuse_is_refused(text):
    with pytest.raises(ValueError, match="not a compose duration"):
        healthchecks._duration(text)


def test_the_checks_come_one_at_a_time_and_ask_the_third_party_for_no_delay():
    """Before the incident a check through nginx starts the interval (and Docker's start of it)
    after the previous one ended; during it, each waits its turn in the pool and holds a thread
    for the incident's extra alone, not the users' delay, so they come further apart."""
    settings = StorySettings(incident_delay=2.28)
    records = simulate(resolve_story(["uwsgi-threads"])[0], settings)
    mine = sorted(
        (a.end_wall - a.request_time, a.end_wall)
        for a in records.access
        if (a.request_id or "").startswith("check.nginx.")
    )
    gaps = [b[0] - a[1] for a, b in itertools.pairwise(mine)]
    assert gaps and all(g == pytest.approx(2.0 + healthchecks.EXEC_S, abs=1e-6) for g in gaps)
    before = [s for s, _ in mine if s < settings.before_s - 3]
    during = [s for s, _ in mine if settings.before_s + 3 < s < settings.before_s + 15]
    assert len(before) >= 6 and len(during) <= len(before) * 12 / 17 / 1.5
    calls = {c.request_id: c for c in records.calls}
    extra = settings.extra_delay
    held = [
        calls[rid].answered_wall - calls[rid].arrived_wall
        for rid in calls
        if rid.startswith("check.") and settings.before_s + 1 < calls[rid].arrived_wall < 40
    ]
    assert held and all(h == pytest.approx(extra) for h in held)
    # The app's own check goes straight to its port: not in nginx's log.
    assert not any((a.request_id or "").startswith("check.app.") for a in records.access)
    assert any(rid.startswith("check.app.") for rid in calls)


def test_the_checks_tip_uwsgis_pool_at_its_edge(monkeypatch):
    """At 2.28 s uWSGI's pool of 128 loses more than the verdict's 5 % of the visits with the
    checks beside the users, and not without them."""
    target = resolve_story(["uwsgi-threads"])[0]
    settings = StorySettings(incident_delay=2.28)
    with_checks = predict_target(target, settings).summary
    monkeypatch.setattr(run, "system_for", lambda *a, **k: replace(system_for(*a, **k), checks=()))
    alone = predict_target(target, settings).summary
    assert with_checks is not None and alone is not None
    served, served_alone = with_checks.visits_served_during, alone.visits_served_during
    assert served is not None and served_alone is not None
    assert served < 0.95 < served_alone
