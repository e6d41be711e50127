"""The map's chart: measured points close together on the delay axis share one block of
labels, so no k/n is written over another (runs at 1.7, 1.72, 1.74 and 1.8 s at 60 visits/s
once were), and points apart keep their own."""

from __future__ import annotations

from playground.incident.oddsresults import MapCell, MapPoint, OddsMap
from playground.story import oddsreport
from tests.unit import chart_labels

RATES = [30.0, 60.0, 90.0]
DELAYS = [1.0, 2.0, 3.0]


def odds_map(points: list[MapPoint]) -> OddsMap:
    cells = [MapCell(rate=r, delay=d, collapsed=0, draws=8) for d in DELAYS for r in RATES]
    return OddsMap(
        target="t", pool=128, rates=RATES, delays=DELAYS, draws_per_cell=8, cells=cells,
        measured=points,
    )  # fmt: skip


def point(rate: float, delay: float, k: int, n: int) -> MapPoint:
    return MapPoint(rate=rate, delay=delay, collapsed=k, runs=n, run_ids=["r"])


CROWDED = [point(60, d, k, 15) for d, k in ((1.6, 14), (1.7, 18), (1.72, 3), (1.74, 13), (1.8, 47))]


def test_points_near_on_the_delay_axis_at_one_rate_share_a_group_and_others_do_not():
    apart = [point(60, 2.5, 4, 4), point(30, 1.7, 0, 3)]
    groups = oddsreport.point_groups(CROWDED + apart, span=2.0)
    assert [[(p.rate, p.delay) for p in g] for g in groups] == [
        [(30, 1.7)],
        [(60, 1.6), (60, 1.7), (60, 1.72), (60, 1.74), (60, 1.8)],
        [(60, 2.5)],
    ]


def test_no_label_of_a_crowded_map_is_drawn_over_another():
    fig = oddsreport.map_figure(odds_map([*CROWDED, point(60, 2.5, 4, 4), point(60, 2.0, 9, 10)]))
    labels = " ".join(chart_labels.texts(fig))
    assert "1.72 s: 3/15" in labels and "4/4" in labels and "9/10" in labels
    assert not chart_labels.overlapping(fig)
