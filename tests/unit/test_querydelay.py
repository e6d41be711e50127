"""The shared `delay` rule: only plain decimals in [0, MAX_DELAY], everything else a reason."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import FUZZ_MAX_DELAY, delay_values, documented_delay

from querydelay import DEFAULT_DELAY, DelayError, format_delay, parse_delay


def test_missing_delay_is_the_default():
    assert parse_delay([]) == DEFAULT_DELAY == 1.0


@pytest.mark.parametrize(
    "raw,expected", [("0", 0.0), ("1", 1.0), ("0.5", 0.5), (".25", 0.25), ("60", 60.0), ("2.", 2.0)]
)
def test_plain_decimals_are_accepted(raw, expected):
    assert parse_delay([raw], limit=60) == expected


@pytest.mark.parametrize("raw", ["nan", "inf", "1e1", "-0", "+1", "1_0", "٣", "0x1", "60.001"])
def test_everything_else_is_refused(raw):
    with pytest.raises(DelayError):
        parse_delay([raw], limit=60)


def test_limit_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("MAX_DELAY", "5")
    with pytest.raises(DelayError, match="at most 5 seconds"):
        parse_delay(["6"])
    assert parse_delay(["5"]) == 5


def test_reason_is_one_short_line_even_for_huge_input():
    with pytest.raises(DelayError) as info:
        parse_delay(["x" * 10_000 + "\n\r\x00"], limit=60)
    message = str(info.value)
    assert "\n" not in message and len(message) < 200


@settings(max_examples=500, deadline=None)
@given(st.lists(st.text(max_size=50), max_size=3))
def test_any_input_gives_a_bounded_delay_or_a_delay_error(values):
    try:
        delay = parse_delay(values, limit=60)
    except DelayError as exc:
        assert "\n" not in str(exc)
    else:
        assert math.isfinite(delay) and 0 <= delay <= 60


@pytest.mark.parametrize(
    "seconds,text",
    [
        (0.0, "0"),
        (1.0, "1"),
        (0.5, "0.5"),
        (60.0, "60"),
        (0.00005, "0.00005"),
        (1e-9, "0.000000001"),
        (5e-10, "0.000000001"),
        (2.5e-10, "0"),
    ],
)
def test_format_delay_writes_what_the_rule_accepts(seconds, text):
    assert format_delay(seconds) == text


@given(st.from_regex(r"\A[0-9]{1,2}(\.[0-9]{0,9})?\Z", fullmatch=True))
@settings(max_examples=300, derandomize=True)
def test_a_valid_delay_and_its_half_pass_on_unchanged(raw):
    """What the apps send slow_api (the delay, the bonus half of it) must pass the same rule."""
    delay = parse_delay([raw], limit=100)
    for seconds in (delay, delay / 2):
        assert parse_delay([format_delay(seconds)], limit=100) == pytest.approx(seconds, abs=1e-9)


@settings(max_examples=1000, deadline=None)
@given(value=delay_values, limit=st.sampled_from([FUZZ_MAX_DELAY, 1.0, 60.0]))
def test_the_rule_is_the_one_the_page_promises(value, limit):
    """docs/scenarios.md's rule, read from the page (tests/strategies.py), and the rule's code
    accept and refuse the same values: the fuzzes judge the servers by the page's."""
    try:
        parse_delay([value], limit=limit)
    except DelayError:
        accepted = False
    else:
        accepted = True
    assert accepted == documented_delay(value, limit=limit), value
