"""The registry: URLs the apps accept, unique names, clear errors for unknown ones."""

from __future__ import annotations

import pytest

from playground.scenarios import REGISTRY, Target, register, resolve
from querydelay import parse_delay


@pytest.mark.parametrize("delay", [0, 0.00001, 0.5, 1, 2.25, 60])
def test_urls_carry_a_delay_the_apps_accept(delay):
    target = REGISTRY["gevent-pywsgi"]
    for url in (target.url(delay=delay), target.host_url(delay=delay)):
        raw = url.split("delay=", 1)[1]
        assert parse_delay([raw]) == pytest.approx(delay, abs=1e-9)


def test_unknown_names_are_a_clear_error():
    with pytest.raises(KeyError, match="unknown scenario 'nope'; known: devserver"):
        resolve(names=["devserver", "nope"])


def test_a_name_cannot_be_registered_twice():
    clash = Target(name="gevent-pywsgi", title="x", compose_file="x.yml", service="x", port=1,
                   host_port=None, requests=1, concurrency=1)
    with pytest.raises(ValueError, match="registered already"):
        register(clash)
    assert REGISTRY["gevent-pywsgi"].compose_file == "async-gevent-pywsgi.yml"
