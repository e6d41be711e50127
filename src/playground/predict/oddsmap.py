"""The map: P(collapse) over arrival rate x the incident's delay, from draws per cell.

The default grid is 11 x 11 around Little's law's edge (rate = pool / delay): rates from half
to 1.5 times the story's, delays from half to 1.5 times the tipping delay (pool / rate) or
the users' timeout where that is shorter, none below the normal delay + 0.1 s. Each cell's draws are :func:`.draws.collapsed` (each its own
system seed and busiest share; cut short after the incident where that cannot change the
verdict). Along each delay's row the cells are simulated outward from the one nearest
Little's edge until a cell collapses in every draw (every faster rate is then counted as
collapsing in every draw) and, below, until one collapses in none (every slower rate as none):
P(collapse) is taken to grow with the rate at a fixed delay. A cell so filled says so
(`simulated` false).

The measured points are the stored story runs of the same target whose settings match the
prediction's apart from rate and delay (and the seeds, the generator's engine and ab's
connections, which do not enter the incident's verdict).
"""

from __future__ import annotations

from dataclasses import fields, replace
from functools import partial
from pathlib import Path

from playground.core import records, runstore
from playground.core.errors import UsageError
from playground.core.jsonmodel import ModelError, ResultsError
from playground.core.records import RecordError
from playground.core.target import Target
from playground.incident import held, runrecords
from playground.incident.oddsresults import MapCell, MapPoint, OddsMap
from playground.incident.settings import StorySettings
from playground.incident.storyresults import StoryRun
from playground.predict.draws import collapse_settings, collapsed
from playground.predict.run import each
from playground.predict.system import system_for

#: The default grid: cells per axis, and each axis from half to 1.5 times its centre.
CELLS = 11
SPAN = (0.5, 1.5)
#: Settings a measured run may differ in and still be a point on the map.
FREE = {
    "rate",
    "incident_delay",
    "seed",
    "system_seed",
    "busiest_share",
    "shares_from",
    "engine",
    "ab_concurrency",
}


def grid(lo: float, hi: float, n: int) -> list[float]:
    """n values from lo to hi, evenly spaced (lo alone where n is 1)."""
    if n < 1:
        raise UsageError(f"the map needs at least one cell per axis, got {n}")
    if not (0 < lo <= hi):
        raise UsageError(f"a map's range must run from above 0 up, got {lo:g} to {hi:g}")
    return [lo] if n == 1 else [round(lo + (hi - lo) * k / (n - 1), 3) for k in range(n)]


def default_ranges(pool: int, settings: StorySettings) -> tuple[tuple[float, float], ...]:
    """Rates around the story's, delays around the tipping delay pool / rate, or around the
    users' timeout where that is shorter (a gevent pool's tipping delay is tens of seconds,
    and past the timeout no attempt is answered in time, whatever the pool)."""
    tipping = min(pool / settings.rate, settings.timeout)
    low = max(settings.normal_delay + 0.1, SPAN[0] * tipping)
    return (SPAN[0] * settings.rate, SPAN[1] * settings.rate), (low, max(low, SPAN[1] * tipping))


def map_of(
    target: Target,
    settings: StorySettings,
    *,
    rates: tuple[float, float] | None,
    delays: tuple[float, float] | None,
    cells: int,
    draws: int,
    results_dir: Path,
    jobs: int | None = None,
) -> tuple[OddsMap, list[str]]:
    """`playground predict --map`: the map over `cells` x `cells` from `rates` and `delays`
    (None: :func:`default_ranges`), every delay checked before a draw is made; and the lines
    that say where each row tips."""
    pool = system_for(target, settings).pool
    default_rates, default_delays = default_ranges(pool, settings)
    grid_rates = grid(*(rates or default_rates), cells)
    grid_delays = grid(*(delays or default_delays), cells)
    for d in grid_delays:
        replace(settings, incident_delay=d)  # refuses a delay no incident can have, up front
    odds_map = predict_map(
        target,
        settings,
        rates=grid_rates,
        delays=grid_delays,
        draws=draws,
        results_dir=results_dir,
        jobs=jobs,
    )
    return odds_map, edge_lines(odds_map, grid_delays, pool)


def _row(
    target: Target, settings: StorySettings, rates: list[float], *, draws: int, pool: int
) -> list[MapCell]:
    """One delay's cells, simulated outward from Little's edge (module docstring)."""
    delay = settings.incident_delay
    found: dict[int, MapCell] = {}

    def cell(i: int) -> MapCell:
        s = replace(settings, rate=rates[i])
        k = sum(collapsed(target, s, n) for n in range(draws))
        found[i] = MapCell(rate=rates[i], delay=delay, collapsed=k, draws=draws)
        return found[i]

    start = min(range(len(rates)), key=lambda i: abs(rates[i] - pool / delay))
    for i in range(start, len(rates)):
        if cell(i).collapsed == draws:
            break
    for i in range(start - 1, -1, -1):
        if cell(i).collapsed == 0:
            break
    top = max(found)
    low = min(found)
    for i in range(len(rates)):
        if i not in found:
            k = draws if i > top else 0
            assert i < low or i > top
            found[i] = MapCell(
                rate=rates[i], delay=delay, collapsed=k, draws=draws, simulated=False
            )
    return [found[i] for i in range(len(rates))]


def _row_at(
    target: Target,
    settings: StorySettings,
    rates: list[float],
    delay: float,
    *,
    draws: int,
    pool: int,
) -> list[MapCell]:
    return _row(target, replace(settings, incident_delay=delay), rates, draws=draws, pool=pool)


def predict_map(
    target: Target,
    settings: StorySettings,
    *,
    rates: list[float],
    delays: list[float],
    draws: int,
    results_dir: Path,
    jobs: int | None = None,
) -> OddsMap:
    """The map of one target, with the measured runs that fall on it (`jobs`: processes,
    :func:`.run.each`'s)."""
    pool = system_for(target, settings).pool
    short = collapse_settings(settings)
    # A row a process: each row is simulated in order (its cells depend on each other).
    rows = each(partial(_row_at, target, short, rates, draws=draws, pool=pool), delays, jobs=jobs)
    cells = [c for row in rows for c in row]
    return OddsMap(
        target=target.name,
        pool=pool,
        incident_s=settings.incident_s,
        rates=rates,
        delays=delays,
        draws_per_cell=draws,
        after_s=short.after_s,
        cells=cells,
        measured=measured_points(results_dir, target.name, settings),
    )


def _matches(measured: StorySettings, settings: StorySettings) -> bool:
    return all(
        getattr(measured, f.name) == getattr(settings, f.name)
        for f in fields(StorySettings)
        if f.name not in FREE
    )


def _story_runs(results_dir: Path) -> list[StoryRun]:
    """Every story run kept under `results_dir` that this version can read."""
    found = []
    for path in sorted(results_dir.glob(f"*/{StoryRun.FILE}")):
        if path.parent.is_symlink():
            continue  # results/latest
        try:
            data = runstore.read(path)
            if data.get("kind") == StoryRun.KIND:
                found.append(StoryRun.from_json(data))
        except ResultsError:
            continue
    return found


#: One measured repeat on the map: its run, rate, delay, and whether it collapsed.
Seen = tuple[str, float, float, bool]


def _stored(results_dir: Path, target: str, settings: StorySettings) -> list[Seen]:
    """The target's measurements in the runs kept under `results_dir`."""
    seen = []
    for run in _story_runs(results_dir):
        if not _matches(run.story, settings):  # a story run's kind only: no prediction, no Swarm
            continue
        for t in run.targets:
            if t.name != target or t.summary is None or t.summary.visits_served_during is None:
                continue
            gone = held.outcome(t.summary.visits_served_during, 0.0) != held.HELD
            seen.append((run.run_id, run.story.rate, run.story.incident_delay, gone))
    return seen


def _recorded(records_dir: Path, target: str, settings: StorySettings) -> list[Seen]:
    """The target's measurements in the committed run records (docs/runs/): the ones the
    pages cite, a verdict and a generator that kept its schedule each. Runs on a Swarm stack
    are left out: the map is the compose path's."""
    seen = []
    name = target.removeprefix("story-")
    for record in runrecords.load_all(records_dir):
        if record.kind != "story":  # a run on a Swarm stack (`swarm`)
            continue
        try:
            measured = record.story_settings()
        except (RecordError, ModelError):
            continue
        if not _matches(measured, settings):
            continue
        for t in record.targets:
            if t.name == name and t.verdict is not None and t.valid is not False:
                gone = t.verdict != held.HELD
                seen.append((record.run_id, measured.rate, measured.incident_delay, gone))
    return seen


def measured_points(
    results_dir: Path,
    target: str,
    settings: StorySettings,
    *,
    records_dir: Path = records.RECORDS_DIR,
) -> list[MapPoint]:
    """The target's measurements whose settings match apart from rate and delay, from the
    runs kept under `results_dir` and the committed records (each run once): k of n
    collapsed per rate and delay."""
    stored = _stored(results_dir, target, settings)
    kept = {run_id for run_id, *_ in stored}
    recorded = [s for s in _recorded(records_dir, target, settings) if s[0] not in kept]
    points: dict[tuple[float, float], tuple[int, int, list[str]]] = {}
    for run_id, rate, delay, gone in stored + recorded:
        k, n, ids = points.get((rate, delay), (0, 0, []))
        points[(rate, delay)] = (k + gone, n + 1, ids if run_id in ids else [*ids, run_id])
    return [
        MapPoint(rate=r, delay=d, collapsed=k, runs=n, run_ids=ids)
        for (r, d), (k, n, ids) in sorted(points.items())
    ]


def edge_lines(odds_map: OddsMap, delays: list[float], pool: int) -> list[str]:
    """One line per delay: the rate from which P(collapse) reaches a half, beside Little's
    law; then how many measured runs sit on the map."""
    lines = []
    for d in delays:
        row = [c for c in odds_map.cells if c.delay == d]
        half = next((c.rate for c in row if c.p >= 0.5), None)
        edge = "none on the map" if half is None else f"{half:g}/s"
        lines.append(
            f"delay {d:g} s: P(collapse) >= 1/2 from {edge}; Little's law {pool / d:.1f}/s"
        )
    lines.append(f"measured runs on the map: {len(odds_map.measured) or 'none found'}")
    return lines
