"""The story's per-second charts: per target its run with the incident shaded, and every
target's goodput overlaid. PNGs beside the report, which embeds them (the sweep's and the
cliff's chart: :func:`.sweep.plot_sweep`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib.figure import Figure

from playground.core.charting import new_figure, save_png
from playground.incident.settings import StorySettings
from playground.incident.storyresults import StoryTarget
from playground.incident.targetresults import StorySecond


def save_story_chart(fig: Figure, path: Path) -> None:
    """The figure laid out, written as a PNG at 100 dpi the deterministic way
    (:func:`playground.core.charting.save_png`: the same run gives the same bytes)."""
    fig.tight_layout()
    save_png(fig, path, dpi=100)


def target_chart_name(target: StoryTarget, *, repeated: bool = False) -> str:
    suffix = f"-{target.repeat}" if repeated else ""
    return f"story-{target.name.removeprefix('story-')}{suffix}.png"


def _series(rows: Sequence[StorySecond], name: str) -> list[float | None]:
    return [getattr(r, name) for r in rows]


def _times(rows: Sequence[StorySecond]) -> list[float]:
    """The middle of each second: where its figure is drawn."""
    return [r.t + 0.5 for r in rows]


def plot_target(target: StoryTarget, settings: StorySettings, path: Path) -> None:
    rows = target.seconds
    t = _times(rows)
    start = target.incident.start if target.incident else settings.before_s
    end = start + settings.incident_s
    fig = new_figure(figsize=(10, 8.5))
    axes = fig.subplots(3, 1, sharex=True)
    for ax in axes:
        ax.axvspan(start, end, color="tab:red", alpha=0.08, label="incident (third party slow)")
        ax.grid(alpha=0.3)
    ax = axes[0]
    ax.plot(t, _series(rows, "arrivals"), label="arrivals (new visits)", color="tab:gray")
    ax.plot(t, _series(rows, "refreshes"), label="refreshes", color="tab:orange")
    ax.plot(t, _series(rows, "goodput"), label="goodput (2xx)", color="tab:green", linewidth=2)
    ax.plot(t, [r.timeouts + r.errors for r in rows], label="timeouts + errors", color="tab:red")
    ax.set_ylabel("per second")
    ax.legend(loc="upper left", fontsize=8, ncol=3)
    ax = axes[1]
    ax.plot(t, _series(rows, "in_flight"), label="in flight (client side)", color="tab:blue")
    for name, label, color, style in (
        ("upstream_in_flight", "waiting on the third party", "tab:purple", "-"),
        ("listen_queue", "app's listen queue (kernel)", "tab:brown", "-"),
        ("busy_cores", "busy threads/greenlets", "tab:olive", "--"),
        ("threads", "OS threads (app)", "black", ":"),
    ):
        if any(getattr(r, name) is not None for r in rows):
            ax.plot(t, _series(rows, name), label=label, color=color, linestyle=style)
    ax.set_ylabel("requests / threads")
    ax.legend(loc="upper left", fontsize=8, ncol=2)
    ax = axes[2]
    ax.plot(t, _series(rows, "latency_p50"), label="user latency p50", color="tab:blue")
    ax.plot(t, _series(rows, "latency_p99"), label="user latency p99", color="tab:red")
    timeout = f"client timeout ({settings.timeout:g} s)"
    ax.axhline(settings.timeout, color="gray", linestyle="--", linewidth=1, label=timeout)
    ax.set_ylabel("seconds (from the intended send,\nby arrival second)")
    ax.set_xlabel("seconds into the run")
    ax.legend(loc="upper left", fontsize=8, ncol=3)
    fig.suptitle(
        f"{target.name}: {settings.rate:g} visits/s, third party "
        f"{settings.normal_delay:g} s → {settings.incident_delay:g} s → "
        f"{settings.normal_delay:g} s"
    )
    save_story_chart(fig, path)


OVERLAY_CHART = "story-goodput.png"


def plot_overlay(targets: Sequence[StoryTarget], settings: StorySettings, path: Path) -> None:
    """Goodput per second of every target through the same incident, on one chart: the
    baseline pool, gevent and each remedy overlaid (the first measurement of each)."""
    fig = new_figure(figsize=(12, 5.5))
    ax = fig.subplots()
    start = next((t.incident.start for t in targets if t.incident), settings.before_s)
    ax.axvspan(start, start + settings.incident_s, color="tab:red", alpha=0.08, label="incident")
    first = targets[0].seconds
    arrivals = [r.arrivals for r in first]
    ax.plot(_times(first), arrivals, color="gray", linestyle=":", label="arrivals (new visits)")
    # Ten colours, then the same ten dashed, then dotted: no two of 30 lines look alike.
    colours = [f"C{i}" for i in range(10)]  # matplotlib's own ten
    for i, t in enumerate(targets):
        width, name = 2 if "+" not in t.name else 1.2, t.name.removeprefix("story-")
        ax.plot(
            _times(t.seconds),
            [r.goodput for r in t.seconds],
            linewidth=width,
            label=name,
            color=colours[i % 10],
            linestyle=("-", "--", ":")[i // 10 % 3],
        )
    ax.set_xlabel("seconds into the run")
    ax.set_ylabel("goodput (2xx answers per second)")
    ax.grid(alpha=0.3)
    # Beside the chart, not over it: with a dozen remedies a legend inside hides the incident.
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7, borderaxespad=0)
    fig.suptitle(
        f"Goodput through the same incident ({settings.rate:g} visits/s, third party "
        f"{settings.normal_delay:g} s → {settings.incident_delay:g} s), every target",
        fontsize=10,
    )
    save_story_chart(fig, path)
