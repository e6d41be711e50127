"""The contenders' registry entries and their compose files agree, and the shared async call
to slow_api answers like the WSGI app does (against the real slow_api on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest

from playground.core import contenders
from playground.core.scenarios import REGISTRY, resolve
from tests.conftest import ROOT, load_module
from tests.unit.conftest import free_port, serve_slow_api


def test_every_contender_is_registered_as_a_contender():
    assert contenders.CONTENDERS
    for target in contenders.CONTENDERS:
        assert REGISTRY[target.name] is target
        assert target.kind == "contender"
        assert target.delay == 1.0


def test_contenders_run_at_the_tutorials_load_except_the_one_that_serialises():
    for target in contenders.CONTENDERS:
        load = (target.requests, target.concurrency)
        if target.name in contenders.SERIALISED:
            assert load == (10, 5), target.name
        else:
            assert load == (2000, 200), target.name


def test_the_shape_sets_cover_every_contender_once():
    sets = (contenders.SERIALISED, contenders.THREAD_PER_REQUEST, contenders.ONE_THREAD)
    names = [n for s in sets for n in s]
    assert sorted(names) == sorted(t.name for t in contenders.CONTENDERS)


def test_scale_leaves_out_only_the_serialising_adapter():
    assert {t.name for t in contenders.CONTENDERS} - {t.name for t in contenders.SCALE} == set(
        contenders.SERIALISED
    )


@pytest.mark.parametrize("target", contenders.CONTENDERS, ids=lambda t: t.name)
def test_compose_file_has_the_service_on_its_port_bound_to_localhost(target):
    text = (ROOT / target.compose_file).read_text()
    assert re.search(rf"^  {re.escape(target.service)}:$", text, re.M), target.service
    block = text.split(f"\n  {target.service}:\n", 1)[1].split("\n\n", 1)[0]
    assert f'ports: ["127.0.0.1:{target.port}:{target.port}"]' in block
    assert f"PORT_APP: {target.port}" in block
    assert "slow_api: {condition: service_started}" in block
    assert not any(line.startswith("version:") for line in text.splitlines())


@pytest.mark.parametrize("target", contenders.SCALE, ids=lambda t: t.name)
def test_every_swept_contender_has_a_scale_override(target):
    override = ROOT / "scale" / target.compose_file
    assert override.is_file(), override
    assert f"  {target.service}:\n" in override.read_text()


def test_resolve_knows_them_by_name():
    assert [t.name for t in resolve(names=["granian-wsgi", "quart-hypercorn"])] == [
        "granian-wsgi",
        "quart-hypercorn",
    ]


def test_requirements_are_pinned():
    for name in ("requirements.txt", "requirements-freethreaded.txt"):
        lines = [
            ln
            for ln in (ROOT / "contenders" / name).read_text().splitlines()
            if ln and not ln.startswith("#")
        ]
        assert lines and all("==" in ln for ln in lines), name


def test_wsgi_contenders_serve_the_flask_apps_own_code():
    """The same app.py, copied unchanged: the Dockerfiles copy flask_app/app.py, not a twin."""
    for dockerfile in ("Dockerfile", "Dockerfile.freethreaded"):
        assert "flask_app/app.py" in (ROOT / "contenders" / dockerfile).read_text()
    assert not (ROOT / "contenders" / "app.py").exists()


# --- the async call to slow_api (contenders/aio_upstream.py) -------------------------------
@pytest.fixture(scope="module")
def aio_upstream():
    return load_module("contenders_aio_upstream", "contenders/aio_upstream.py")


def _call(
    module, port: int, delay: float, *, grace: float = 5.0, rid: str | None = None
) -> tuple[str, int]:
    module.API_URL = f"http://127.0.0.1:{port}/"
    module.UPSTREAM_GRACE_S = grace

    async def go():
        async with module.session() as client:
            return await module.call_slow_api(client, delay, rid)

    return asyncio.run(go())


def test_async_call_answers_with_the_apis_text(aio_upstream):
    with serve_slow_api("contenders_slow_api") as port:
        assert _call(aio_upstream, port, 0.1) == ("slow api response", 200)
        # The upstream refusing a delay (over its MAX_DELAY) is a 502 that says so.
        assert _call(aio_upstream, port, 100000) == ("slow_api answered 400", 502)


def test_async_call_passes_the_request_id_on(aio_upstream, tmp_path):
    log = tmp_path / "calls.log"
    with serve_slow_api("contenders_slow_api_calls", calls_log=str(log)) as port:
        assert _call(aio_upstream, port, 0.05, rid="beef01")[1] == 200
        assert _call(aio_upstream, port, 0.05, rid="no id\r\nX: 1")[1] == 200
    assert [line.split()[0] for line in log.read_text().splitlines()] == ["beef01"]


def test_async_call_gives_504_when_the_upstream_hangs(aio_upstream, silent_port):
    text, status = _call(aio_upstream, silent_port, 0, grace=0.3)
    assert status == 504 and "did not answer within 0.3 s" in text


def test_async_call_gives_502_when_nothing_listens(aio_upstream):
    text, status = _call(aio_upstream, free_port(), 0)
    assert status == 502 and text.startswith("slow_api unreachable: ")


def test_the_pool_cap_is_aiohttps_default_unless_configured(aio_upstream):
    assert aio_upstream.POOL_LIMIT == 100

    async def limit():
        async with aio_upstream.session() as client:
            return client.connector.limit

    assert asyncio.run(limit()) == 100


# --- the free-threaded guard (contenders/freethreaded.py) -----------------------------------
def test_the_gil_guard_refuses_a_normal_interpreter(monkeypatch):
    """On the host's normal CPython the guard must refuse: it is what stops the free-threaded
    image from reporting GIL figures as no-GIL ones."""
    if not sys._is_gil_enabled() if hasattr(sys, "_is_gil_enabled") else False:
        pytest.skip("this interpreter runs without a GIL")
    monkeypatch.syspath_prepend(str(ROOT / "flask_app"))
    with pytest.raises(RuntimeError, match=r"refusing to serve: .*not a free-threaded build"):
        load_module("contenders_freethreaded", "contenders/freethreaded.py")


def test_the_scale_plan_layers_each_contenders_override():
    from playground.bench.plan import Plan

    plan = Plan(
        targets=contenders.SCALE, overrides_dir=ROOT / "scale", sweep=(100,), delays=((100, 1.0),)
    )
    for target in contenders.SCALE:
        (load,) = plan.loads(target)
        assert load.compose_files == (target.compose_file, f"scale/{target.compose_file}")


def test_the_cli_takes_contenders_for_run_and_scale():
    from playground.cli import build_parser

    assert build_parser().parse_args(["run", "--contenders"]).contenders is True
    assert build_parser().parse_args(["scale", "--contenders"]).contenders is True
    assert build_parser().parse_args(["run"]).contenders is False


def test_playground_list_shows_every_contender_as_one():
    from rich.console import Console

    from playground.commands.listing import cmd_list

    out = Console(record=True, width=400)
    assert cmd_list(None, out, Console(stderr=True)) == 0
    lines = out.export_text().splitlines()
    for target in contenders.CONTENDERS:
        (line,) = [ln for ln in lines if re.search(rf"│ {re.escape(target.name)} +│", ln)]
        assert re.search(rf"│ contender +│ {re.escape(target.compose_file)} +│", line), line


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            found[re.sub(r"\[.*\]", "", name).lower()] = version
    return found


def test_the_images_share_the_versions_of_every_library_they_share():
    """`make lock` resolves the contenders against the Flask image's pins, and the free-threaded
    image against the contenders': the same app runs on the same libraries in all three."""
    flask = pins(ROOT / "flask_app" / "requirements.txt")
    gil = pins(ROOT / "contenders" / "requirements.txt")
    freethreaded = pins(ROOT / "contenders" / "requirements-freethreaded.txt")
    assert {k: gil[k] for k in gil.keys() & flask.keys()} == {
        k: flask[k] for k in gil.keys() & flask.keys()
    }
    assert {k: freethreaded[k] for k in freethreaded.keys() & gil.keys()} == {
        k: gil[k] for k in freethreaded.keys() & gil.keys()
    }
    assert {"flask", "werkzeug", "requests", "gunicorn"} <= gil.keys() & freethreaded.keys()
