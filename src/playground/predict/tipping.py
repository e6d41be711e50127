"""Where a pool tips in the model: the offered load it falls at (`playground predict --sweep
rate`) and the incident's delay it collapses from (`--sweep delay`), each beside Little's law,
with the lines the command prints of them."""

from __future__ import annotations

from functools import partial

from playground.core.target import Target
from playground.incident import capacity, held
from playground.incident.settings import StorySettings, SweepSettings
from playground.incident.storyresults import Cliff, CliffTarget, Sweep
from playground.predict import run as model
from playground.predict.system import system_for

#: `--sweep rate`: offered load from 40% to 140% of Little's capacity, in 5% steps.
RATE_SHARES = [round(0.40 + 0.05 * k, 2) for k in range(21)]
#: `--sweep delay`: the incident's delay from half to 1.5 times Little's tipping delay.
DELAY_SHARES = [round(0.5 + 0.1 * k, 1) for k in range(11)]


def rate_sweep(
    targets: list[Target], settings: StorySettings, *, delay: float, jobs: int
) -> tuple[Sweep, list[str]]:
    """Each target at offered loads around Little's capacity with the third party at `delay`;
    one line per target: the rate it falls at, beside Little's law."""
    sweeps = []
    lines = []
    for t in targets:
        pool = system_for(t, settings).pool
        rates = [round(share * pool / delay, 1) for share in RATE_SHARES]
        sweep = model.rate_sweep(t, settings, rates=rates, delay=delay, jobs=jobs)
        sweeps.append(sweep)
        edge = model.edge_rate(sweep)
        little = capacity.predict(
            workers=1, threads=pool, upstream_s=delay, rate=settings.rate, timeout_s=1
        ).capacity_per_s
        held_at = [st.rate for st in sweep.steps if edge is None or st.rate < edge]
        fell = "none in the sweep" if edge is None else f"{edge:g} visits/s"
        fell += f" (held at {max(held_at):g})" if held_at else " (the sweep's lowest rate)"
        lines.append(
            f"{t.name}: falls at {fell}; Little's law: {pool} / {delay:g} s = {little:.1f}/s, "
            f"a fall below {held.HELD_SHARE:.0%} of the offered from {little / held.HELD_SHARE:.1f}/s"
        )
    sweep_all = Sweep(
        settings=SweepSettings(rates=[step.rate for step in sweeps[0].steps], delay=delay),
        targets=sweeps,
    )
    return sweep_all, lines


def delay_cliff(
    targets: list[Target], settings: StorySettings, *, jobs: int
) -> tuple[Cliff, list[str]]:
    """Each target through incidents of growing delay around Little's tipping delay; one line
    per target: the delay it collapses from and the one it does not recover from."""
    s = settings
    cliff = Cliff(delay=s.incident_delay, targets=[])
    lines = []
    for t in targets:
        pool = system_for(t, s).pool
        tipping = pool / s.rate
        delays = sorted({round(max(s.normal_delay + 0.1, f * tipping), 2) for f in DELAY_SHARES})
        steps = model.each(partial(model.delay_step, t, s), delays, jobs=jobs)
        edge = next((d.incident_delay for d in steps if d.held is False), None)
        lost = next((d.incident_delay for d in steps if d.recovered is False), None)
        cliff.delays = delays
        cliff.targets.append(
            CliffTarget(
                name=t.name, title=t.title, delays=steps, edge_delay=edge, unrecovered_delay=lost
            )
        )
        lines.append(
            f"{t.name}: collapses from {'-' if edge is None else f'{edge:g} s'}, does not recover "
            f"from {'-' if lost is None else f'{lost:g} s'}; Little's law: {pool} / {s.rate:g} "
            f"= {tipping:.2f} s fills the pool (a steady state without reloads)"
        )
    return cliff, lines
