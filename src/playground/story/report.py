"""The story's report: per mode a per-second chart with the incident shaded, and one table.

Markdown (story.md) and HTML (story.html) from the same blocks, charts as PNGs beside them.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib import pyplot as plt

Block = tuple[str, object]  # ("h1"|"h2"|"p"|"table"|"img"|"code", content)


def _f(value: object, digits: int = 1, unit: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}{unit}"
    return f"{value}{unit}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _recovery(s: dict, after_s: float) -> str:
    if s["recovery_s"] is None:
        return f"not within the run (> {after_s:g} s)"
    return f"{s['recovery_s']:.0f} s"


COLUMNS = (
    "mode",
    "valid",
    "arrivals/s",
    "goodput/s before",
    "goodput/s during",
    "goodput/s after",
    "visits served during",
    "time to recover",
    "attempts/visit",
    "timeouts",
    "errors",
    "wasted (499)",
    "peak in flight",
    "peak listen queue",
    "threads before → peak",
    "user p99 during",
)


def summary_rows(data: dict) -> list[list[str]]:
    after_s = data["settings"]["after_s"]
    rows = []
    for m in data["modes"]:
        if "summary" not in m and "error" not in m:
            continue  # only the closed loop ran for this mode
        if "summary" not in m:
            rows.append(
                [m["mode"], "error: " + m.get("error", "?")[:80]] + ["-"] * (len(COLUMNS) - 2)
            )
            continue
        s = m["summary"]
        valid = "yes" if m["check"]["valid"] else "no: " + "; ".join(m["check"]["reasons"])
        queue = s["peak_listen_queue"]
        rows.append(
            [
                m["mode"],
                valid,
                _f(s["arrival_rate"]),
                _f(s["goodput_before"]),
                _f(s["goodput_during"]),
                _f(s["goodput_after"]),
                _pct(s["visits_served_during"]),
                _recovery(s, after_s),
                _f(s["amplification"], 2),
                _f(s["timeouts"]),
                _f(s["errors"]),
                _f(s["wasted_499"]),
                _f(s["peak_in_flight"]),
                _f(queue),
                f"{_f(s['threads_before'])} → {_f(s['peak_threads'])}",
                _f(s["user_latency_p99_during"], 1, " s"),
            ]
        )
    return rows


def plot_mode(entry: dict, settings: dict, path: Path) -> None:
    rows = entry["seconds"]
    t = [r["t"] + 0.5 for r in rows]
    start = entry["incident"]["start"]
    fig, axes = plt.subplots(3, 1, figsize=(10, 8.5), sharex=True)
    for ax in axes:
        ax.axvspan(
            start,
            start + settings["incident_s"],
            color="tab:red",
            alpha=0.08,
            label="incident (third party slow)",
        )
        ax.grid(alpha=0.3)

    def series(key: str) -> list[float | None]:
        return [r.get(key) for r in rows]

    ax = axes[0]
    ax.plot(t, series("arrivals"), label="arrivals (new visits)", color="tab:gray")
    ax.plot(t, series("refreshes"), label="refreshes", color="tab:orange")
    ax.plot(t, series("goodput"), label="goodput (2xx)", color="tab:green", linewidth=2)
    ax.plot(
        t, [r["timeouts"] + r["errors"] for r in rows], label="timeouts + errors", color="tab:red"
    )
    ax.set_ylabel("per second")
    ax.legend(loc="upper left", fontsize=8, ncol=3)
    ax = axes[1]
    ax.plot(t, series("in_flight"), label="in flight (client side)", color="tab:blue")
    if any(r.get("upstream_in_flight") is not None for r in rows):
        ax.plot(
            t, series("upstream_in_flight"), label="waiting on the third party", color="tab:purple"
        )
    if any(r.get("listen_queue") is not None for r in rows):
        ax.plot(t, series("listen_queue"), label="app's listen queue (kernel)", color="tab:brown")
    if any(r.get("busy_cores") is not None for r in rows):
        ax.plot(
            t,
            series("busy_cores"),
            label="uWSGI busy threads/greenlets",
            color="tab:olive",
            linestyle="--",
        )
    if any(r.get("threads") is not None for r in rows):
        ax.plot(t, series("threads"), label="OS threads (app)", color="black", linestyle=":")
    ax.set_ylabel("requests / threads")
    ax.legend(loc="upper left", fontsize=8, ncol=2)
    ax = axes[2]
    ax.plot(t, series("latency_p50"), label="user latency p50", color="tab:blue")
    ax.plot(t, series("latency_p99"), label="user latency p99", color="tab:red")
    ax.axhline(
        settings["timeout"],
        color="gray",
        linestyle="--",
        linewidth=1,
        label=f"client timeout ({settings['timeout']:g} s)",
    )
    ax.set_ylabel("seconds (from the intended send,\nby arrival second)")
    ax.set_xlabel("seconds into the run")
    ax.legend(loc="upper left", fontsize=8, ncol=3)
    fig.suptitle(
        f"{entry['mode']}: {settings['rate']:g} visits/s, third party "
        f"{settings['normal_delay']:g} s → {settings['incident_delay']:g} s → "
        f"{settings['normal_delay']:g} s"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


CLOSED_COLUMNS = (
    "mode",
    "ab c",
    "ab requests/s before → during → after",
    "ab failed",
    "ab non-2xx",
    "ab max latency",
    "open loop: goodput/s before → during → after",
    "open loop: timeouts",
    "open loop: attempts/visit",
)


def _arrow(values: Sequence[float | None]) -> str:
    return " → ".join(_f(v, 0) for v in values)


def closed_loop_rows(data: dict) -> list[list[str]]:
    rows = []
    for m in data["modes"]:
        if "closed_loop" not in m and "closed_loop_error" not in m:
            continue
        s = m.get("summary")
        opened = (
            [
                _arrow([s["goodput_before"], s["goodput_during"], s["goodput_after"]]),
                _f(s["timeouts"]),
                _f(s["amplification"], 2),
            ]
            if s
            else ["-", "-", "-"]
        )
        c = m.get("closed_loop")
        if c is None:
            rows.append(
                [m["mode"], "error: " + m["closed_loop_error"][:80], "-", "-", "-", "-", *opened]
            )
            continue
        per = {p["name"]: p["per_s"] for p in c["phases"]}
        rows.append(
            [
                m["mode"],
                str(c["concurrency"]),
                _arrow([per["before"], per["during"], per["after"]]),
                str(c["failed"]),
                str(c["non_2xx"]),
                _f(c["latency_max_s"], 1, " s"),
                *opened,
            ]
        )
    return rows


SWEEP_COLUMNS = (
    "mode",
    "offered/s",
    "measured offered/s",
    "attempts/s",
    "goodput/s",
    "timeouts",
    "errors",
    "visits served",
    "user p50",
    "user p99",
    "valid",
)


def sweep_rows(sweep: dict) -> list[list[str]]:
    rows = []
    for m in sweep["modes"]:
        if "error" in m:
            rows.append([m["mode"], "error: " + m["error"][:80]] + ["-"] * 9)
        for st in m.get("steps", []):
            valid = "yes" if st["valid"] else "no: " + "; ".join(st["check_reasons"])
            rows.append(
                [
                    m["mode"],
                    f"{st['rate']:g}",
                    _f(st["offered_per_s"]),
                    _f(st["attempts_per_s"]),
                    _f(st["goodput_per_s"]),
                    str(st["timeouts"]),
                    str(st["errors"]),
                    _pct(st["visits_served"]),
                    _f(st["latency_p50_s"], 2, " s"),
                    _f(st["latency_p99_s"], 2, " s"),
                    valid,
                ]
            )
    return rows


SWEEP_STYLE = {
    "uwsgi-threads": ("tab:red", "-"),
    "gunicorn-threads": ("tab:orange", "-"),
    "uwsgi-gevent": ("tab:blue", "--"),
    "gunicorn-gevent": ("tab:green", "--"),
}


def plot_sweep(sweep: dict, settings: dict, path: Path) -> None:
    """Goodput against offered load, a line per mode, the ideal diagonal and each thread
    pool's capacity (workers x threads / delay)."""
    fig, ax = plt.subplots(figsize=(9, 6))
    top = max([st["rate"] for m in sweep["modes"] for st in m.get("steps", [])] or [1])
    ax.plot(
        [0, top * 1.05],
        [0, top * 1.05],
        color="gray",
        linestyle=":",
        linewidth=1,
        label="ideal: goodput = offered",
    )
    capacities = sorted(
        {m["capacity_per_s"] for m in sweep["modes"] if m.get("capacity_per_s") and m.get("steps")}
    )
    for cap in capacities:
        ax.axhline(
            cap,
            color="black",
            linestyle="-.",
            linewidth=1,
            alpha=0.6,
            label=f"thread pool's capacity: {settings['workers']} x "
            f"{settings['threads']} / {sweep['settings']['delay']:g} s = {cap:g}/s",
        )
    for m in sweep["modes"]:
        steps = m.get("steps") or []
        if not steps:
            continue
        color, style = SWEEP_STYLE.get(m["mode"], (None, "-"))
        ax.plot(
            [st["rate"] for st in steps],
            [st["goodput_per_s"] for st in steps],
            marker="o",
            color=color,
            linestyle=style,
            linewidth=2,
            label=m["mode"],
        )
        bad = [st for st in steps if not st["valid"]]
        if bad:
            ax.plot(
                [st["rate"] for st in bad],
                [st["goodput_per_s"] for st in bad],
                linestyle="none",
                marker="x",
                color="black",
                markersize=9,
            )
    ax.set_xlim(0, top * 1.05)
    ax.set_ylim(0, top * 1.1)
    ax.set_xlabel("offered load (visits/s, Poisson)")
    ax.set_ylabel("goodput (2xx answers/s, measured window)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    w = sweep["settings"]
    fig.suptitle(
        f"Goodput vs offered load, third party at {w['delay']:g} s; users reload "
        f"after {settings['timeout']:g} s (x: the generator's self-check failed)",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def document(data: dict, charts: dict[str, str]) -> list[Block]:
    s = data["settings"]
    blocks: list[Block] = [
        ("h1", "The war story: an incident at the third party, open-loop users"),
        (
            "p",
            f"{s['rate']:g} visits/s ({s['arrival']}, seed {s['seed']}) for "
            f"{s['duration']:g} s; the third party answers in {s['normal_delay']:g} s, then "
            f"in {s['incident_delay']:g} s from second {s['before_s']:g} for "
            f"{s['incident_s']:g} s, then in {s['normal_delay']:g} s again. A user gives up "
            f"after {s['timeout']:g} s, waits {s['refresh_delay']:g} s and reloads, up to "
            f"{s['max_attempts']} attempts. Thread pools: {s['workers']} processes x "
            f"{s['threads']} threads; gevent: {s['workers']} x {s['async_cores']}; uWSGI's "
            f"listen queue {s['listen']}.",
        ),
        (
            "p",
            "Goodput is answers with status 2xx per second. Latency is a user's, from the "
            "intended send of the first attempt to the first success, refreshes included; "
            "a user never served counts with what they had waited when they gave up. "
            "Wasted = requests nginx logged as 499 (the client had gone; the app still "
            "worked on them). Time to recover: from the end of the incident until goodput "
            "is back to 95% of the answers due (visits arriving, shifted by the normal "
            "latency) over 5 s windows with at most 5% failing, and stays so until the "
            "arrivals stop (whole seconds, counted from the first after the incident).",
        ),
    ]
    incident_rows = summary_rows(data)
    if incident_rows:
        blocks.append(("table", (COLUMNS, incident_rows)))
    closed = closed_loop_rows(data)
    if closed:
        blocks += [
            ("h2", "The same incident under a closed loop (ab)"),
            (
                "p",
                f"ab -c {s.get('closed_loop_concurrency', '?')} (what the open loop keeps in "
                f"flight normally: rate x normal delay) for {s['duration']:g} s through the "
                "same incident, the control request sent to the third party the same second. "
                "ab's requests/s are the requests it sent in each phase (by their start "
                "second, as its -g file records them); failed and non-2xx are ab's own "
                "counts. A closed loop sends its next request only when one has returned, "
                "so it slows down with the server: it reports 'slower', where the open "
                "loop's users, who keep arriving, see what the table's right half shows.",
            ),
            ("table", (CLOSED_COLUMNS, closed)),
        ]
        for m in data["modes"]:
            if m.get("closed_loop", {}).get("adds_up"):
                blocks.append(
                    (
                        "p",
                        f"{m['mode']} (ab): the requests do NOT add up: "
                        + "; ".join(m["closed_loop"]["adds_up"]),
                    )
                )
    sweep = data.get("sweep")
    if sweep:
        w = sweep["settings"]
        blocks += [
            ("h2", "Goodput against offered load"),
            (
                "p",
                f"Per mode, one step per offered rate ({', '.join(f'{r:g}' for r in w['rates'])}"
                f" visits/s, {s['arrival']}), the third party at {w['delay']:g} s throughout, "
                f"no incident; {w['warmup_s']:g} s of warm-up, then {w['measure_s']:g} s "
                f"measured. Users as in the story: they give up after {s['timeout']:g} s and "
                f"reload, up to {s['max_attempts']} attempts. Goodput: 2xx answers per second "
                "ending in the window; offered and attempts: first attempts and all attempts "
                "meant to be sent in it; user latency from the intended send, for the visits "
                "arriving in it.",
            ),
        ]
        if "sweep" in charts:
            blocks.append(("img", charts["sweep"]))
        blocks.append(("table", (SWEEP_COLUMNS, sweep_rows(sweep))))
        for m in sweep["modes"]:
            for st in m.get("steps", []):
                if st["adds_up"]:
                    blocks.append(
                        (
                            "p",
                            f"{m['mode']} at {st['rate']:g}/s: the attempts do NOT "
                            "add up: " + "; ".join(st["adds_up"]),
                        )
                    )
            if m.get("commands"):
                blocks.append(("code", "\n".join(m["commands"])))
    for m in data["modes"]:
        if m["mode"] in charts:
            blocks.append(("h2", m["mode"]))
            if m.get("adds_up"):
                blocks.append(
                    ("p", "The per-second series do NOT add up: " + "; ".join(m["adds_up"]))
                )
            blocks.append(("img", charts[m["mode"]]))
            blocks.append(("code", "\n".join(m.get("commands", []))))
    for m in data["modes"]:
        if m.get("closed_loop", {}).get("commands"):
            blocks.append(("h2", f"{m['mode']}: the closed loop's commands"))
            blocks.append(("code", "\n".join(m["closed_loop"]["commands"])))
    blocks.append(("h2", "Command"))
    blocks.append(("code", data.get("command", "")))
    return blocks


def _md(blocks: Sequence[Block]) -> str:
    out = []
    for kind, content in blocks:
        if kind == "h1":
            out.append(f"# {content}")
        elif kind == "h2":
            out.append(f"## {content}")
        elif kind == "p":
            out.append(str(content))
        elif kind == "table":
            head, rows = content
            lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
            out.append("\n".join(lines))
        elif kind == "img":
            out.append(f"![{content}]({content})")
        elif kind == "code":
            out.append(f"```\n{content}\n```")
    return "\n\n".join(out) + "\n"


def _html(blocks: Sequence[Block], run_dir: Path) -> str:
    out = [
        "<!doctype html><meta charset='utf-8'><title>The war story</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
        "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;"
        "padding:3px 6px}pre{background:#f4f4f4;padding:8px;overflow-x:auto}</style>",
    ]
    for kind, content in blocks:
        if kind in ("h1", "h2"):
            out.append(f"<{kind}>{html.escape(str(content))}</{kind}>")
        elif kind == "p":
            out.append(f"<p>{html.escape(str(content))}</p>")
        elif kind == "table":
            head, rows = content
            out.append(
                "<table><tr>"
                + "".join(f"<th>{html.escape(h)}</th>" for h in head)
                + "</tr>"
                + "".join(
                    "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>"
                    for r in rows
                )
                + "</table>"
            )
        elif kind == "img":
            data = base64.b64encode((run_dir / str(content)).read_bytes()).decode()
            out.append(
                f"<img alt='{html.escape(str(content))}' "
                f"src='data:image/png;base64,{data}' style='max-width:100%'>"
            )
        elif kind == "code":
            out.append(f"<pre>{html.escape(str(content))}</pre>")
    return "\n".join(out) + "\n"


def write_report(*, run_dir: Path, data: dict) -> list[Path]:
    charts = {}
    for m in data["modes"]:
        if "seconds" in m:
            name = f"story-{m['mode']}.png"
            plot_mode(m, data["settings"], run_dir / name)
            charts[m["mode"]] = name
    if any(m.get("steps") for m in (data.get("sweep") or {}).get("modes", [])):
        plot_sweep(data["sweep"], data["settings"], run_dir / "story-sweep.png")
        charts["sweep"] = "story-sweep.png"
    blocks = document(data, charts)
    md, page = run_dir / "story.md", run_dir / "story.html"
    md.write_text(_md(blocks))
    page.write_text(_html(blocks, run_dir))
    return [md, page, *(run_dir / c for c in charts.values())]
