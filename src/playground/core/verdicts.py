"""The verdicts every kind of run and the report share, each threshold with its reason.

A bench entry's verdicts (:func:`verdicts`: its shape, whether it kept scaling) are decided once
when it is measured and stored with it; the store gives them to an entry of an older file when
it reads it (:func:`upgrade`); the report explains them by these same thresholds, and the fault
runs read a retransmitted SYN (:func:`syn_retransmitted`) and queueing (:func:`queued`) by
the same rules as the bench. The bench's other rules, which
only the bench reads, are in :mod:`playground.bench.diagnosis`.
"""

from __future__ import annotations

from dataclasses import replace

from playground.core.results import Entry, Run

#: A TCP connect this slow means a SYN was retransmitted. Linux retransmits an unanswered SYN
#: after its initial RTO of 1 s, so such a connect takes 1000 ms and more; on a local bridge a
#: connect otherwise takes a few ms. 900 (not 1000) leaves room for ab's whole-millisecond
#: rounding and timer slack, and nothing between 10 and 900 ms can happen on this network.
SYN_RETRANSMIT_MS = 900.0
#: Two retransmits: 1 s + 2 s.
SYN_RETRANSMIT_TWICE_MS = 2900.0
#: A retransmitted SYN also leaves a gap of a whole timeout between its connect and the others:
#: in ab's per-request file the retransmits on listen(1) stood 1013 and 1018 ms apart from the
#: rest. At c=10,000 the connects of ab's first wave instead climb in steps of at most ~560 ms
#: to 0.9-2.9 s (ab and the machine getting round to 10,000 sockets; on a quiet machine, with
#: nstat showing no overflow and no retransmit, to 431 ms), so a slow maximum alone is no proof.
SYN_GAP_MS = SYN_RETRANSMIT_MS
#: A median this many times the upstream delay means requests queued before being served.
QUEUED_FACTOR = 2.0
#: A steady rate (c / mean response time) needs the run to last this many response times:
#: ab's lone first request and a queue building up take about two, so with four the loaded
#: phase is at least half the run. Measured: the serial dev server at n=10 c=5 lasts ~3 and
#: c / mean reads 1.4 rps where it served 0.98; the bonus without psycogreen ~2.6 (2.0 vs 1.5).
MIN_STEADY_WAVES = 4.0
#: An entry whose repeats lie further apart than this (max - min over the median) is noisy.
NOISY_SPREAD = 0.05
#: Below this share of its ideal an entry "missed its target" and the report wants a reason.
TARGET_EFFICIENCY = 0.9
#: Overlap (:func:`overlap`): a server that serves one sleeping request at a time runs at
#: 1 / delay whatever the clients do, so the tool's requests/s x delay reads about 1; at most
#: this many at once is "serialised".
SERIALISED_AT_ONCE = 1.5
#: ... and it is "concurrent" when it holds at least this share of c in flight (steady
#: requests/s over the ideal c / delay, i.e. Little's law's requests in flight over c); below
#: it, "capped": a pool, a thread count or a connection cap holds a number of requests whatever
#: c is. Two thirds sits between a cap at c/2 (aiohttp's 100 connections at c=200 reads 0.5)
#: and a concurrent mode slowed by CPU on a shared machine (Gunicorn gthread 4 x 50 at c=200
#: read 0.82).
CONCURRENT_SHARE = 2 / 3


def syn_retransmitted(connect_max_ms: float | None) -> bool:
    """Whether a connect this slow took a retransmitted SYN (:data:`SYN_RETRANSMIT_MS`); the
    bench's diagnosis also reads the gap before it, the faults read this alone."""
    return connect_max_ms is not None and connect_max_ms >= SYN_RETRANSMIT_MS


def queued(*, p50_ms: float | None, delay: float) -> bool:
    """Whether the median request queued before it was served (:data:`QUEUED_FACTOR`)."""
    return delay > 0 and p50_ms is not None and p50_ms > QUEUED_FACTOR * delay * 1000


# --- overlap -----------------------------------------------------------------------------------
def overlap(
    *,
    rps: float | None,
    delay: float | None,
    concurrency: int,
    efficiency: float | None = None,
    ab_cap_rps: float | None = None,
) -> str | None:
    """ "serialised", "capped" or "concurrent": how many of c sleeping requests the server held
    at once; None with no sleep (the run measured CPU, not waiting) or no figure.

    Serialised reads the tool's own rate (rps x delay), never the steady figure: a short run
    against a one-at-a-time server never settles. Concurrent or capped reads the steady share
    of the ideal (``efficiency``) where the run reached a steady state, else the tool's rate
    against the most it could report (c / delay, or ab's own ceiling for a short ab run).
    """
    if rps is None or not delay or concurrency <= 0:
        return None
    if rps * delay <= SERIALISED_AT_ONCE:
        return "serialised"
    if efficiency is None:
        ceilings = [concurrency / delay, *([ab_cap_rps] if ab_cap_rps else [])]
        efficiency = rps / min(ceilings)
    return "concurrent" if efficiency >= CONCURRENT_SHARE else "capped"


# --- verdicts stored with an entry --------------------------------------------------------------
#: A mode keeps scaling at a concurrency where it answered with no errors at this share of the
#: ideal c / delay or more (docs/scale.md: the gevent modes held 0.93-0.95 up to c=10,000, a
#: pool at its limit fell below 0.5).
SCALE_GOOD = 0.9


def _efficiency(entry: Entry) -> float | None:
    if entry.efficiency is not None:
        return entry.efficiency
    if entry.steady_rps is not None and entry.ideal_rps:
        return entry.steady_rps / entry.ideal_rps
    return None


def verdicts(entry: Entry) -> Entry:
    """The entry with its verdicts decided (`shape`, `keeps_scaling`): the runner calls this
    once per measurement; the report and `compare` only read them."""
    if entry.error:
        return replace(entry, shape=None, keeps_scaling=False)
    shape = overlap(
        rps=entry.rps,
        delay=entry.delay,
        concurrency=entry.concurrency,
        efficiency=_efficiency(entry),
        ab_cap_rps=entry.ab_cap_rps,
    )
    ok = entry.valid and not entry.invalid_reasons
    return replace(entry, shape=shape, keeps_scaling=ok and (_efficiency(entry) or 0) >= SCALE_GOOD)


def upgrade(run: Run) -> Run:
    """An entry written before the verdicts were stored (`keeps_scaling` is never null after
    :func:`verdicts`) gets them once, when its file is read; the others are left as they are."""

    def once(entry: Entry) -> Entry:
        return verdicts(entry) if entry.keeps_scaling is None else entry

    run.calibration = once(run.calibration) if run.calibration else None
    run.scenarios = [once(e) for e in run.scenarios]
    run.probe = once(run.probe) if run.probe else None
    return run
