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
from matplotlib import pyplot as plt  # noqa: E402

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


COLUMNS = ("mode", "valid", "arrivals/s", "goodput/s before", "goodput/s during",
           "goodput/s after", "visits served during", "time to recover", "attempts/visit",
           "timeouts", "errors", "wasted (499)", "peak in flight", "peak listen queue",
           "threads before → peak", "user p99 during")


def summary_rows(data: dict) -> list[list[str]]:
    after_s = data["settings"]["after_s"]
    rows = []
    for m in data["modes"]:
        if "summary" not in m:
            rows.append([m["mode"], "error: " + m.get("error", "?")[:80]]
                        + ["-"] * (len(COLUMNS) - 2))
            continue
        s = m["summary"]
        valid = "yes" if m["check"]["valid"] else "no: " + "; ".join(m["check"]["reasons"])
        queue = s["peak_listen_queue"]
        rows.append([
            m["mode"], valid, _f(s["arrival_rate"]), _f(s["goodput_before"]),
            _f(s["goodput_during"]), _f(s["goodput_after"]), _pct(s["visits_served_during"]),
            _recovery(s, after_s), _f(s["amplification"], 2), _f(s["timeouts"]),
            _f(s["errors"]), _f(s["wasted_499"]), _f(s["peak_in_flight"]),
            _f(queue), f"{_f(s['threads_before'])} → {_f(s['peak_threads'])}",
            _f(s["user_latency_p99_during"], 1, " s"),
        ])
    return rows


def plot_mode(entry: dict, settings: dict, path: Path) -> None:
    rows = entry["seconds"]
    t = [r["t"] + 0.5 for r in rows]
    start = entry["incident"]["start"]
    fig, axes = plt.subplots(3, 1, figsize=(10, 8.5), sharex=True)
    for ax in axes:
        ax.axvspan(start, start + settings["incident_s"], color="tab:red", alpha=0.08,
                   label="incident (third party slow)")
        ax.grid(alpha=0.3)

    def series(key: str) -> list[float | None]:
        return [r.get(key) for r in rows]

    ax = axes[0]
    ax.plot(t, series("arrivals"), label="arrivals (new visits)", color="tab:gray")
    ax.plot(t, series("refreshes"), label="refreshes", color="tab:orange")
    ax.plot(t, series("goodput"), label="goodput (2xx)", color="tab:green", linewidth=2)
    ax.plot(t, [r["timeouts"] + r["errors"] for r in rows], label="timeouts + errors",
            color="tab:red")
    ax.set_ylabel("per second")
    ax.legend(loc="upper left", fontsize=8, ncol=3)
    ax = axes[1]
    ax.plot(t, series("in_flight"), label="in flight (client side)", color="tab:blue")
    if any(r.get("upstream_in_flight") is not None for r in rows):
        ax.plot(t, series("upstream_in_flight"), label="waiting on the third party",
                color="tab:purple")
    if any(r.get("listen_queue") is not None for r in rows):
        ax.plot(t, series("listen_queue"), label="app's listen queue (kernel)",
                color="tab:brown")
    if any(r.get("busy_cores") is not None for r in rows):
        ax.plot(t, series("busy_cores"), label="uWSGI busy threads/greenlets",
                color="tab:olive", linestyle="--")
    if any(r.get("threads") is not None for r in rows):
        ax.plot(t, series("threads"), label="OS threads (app)", color="black", linestyle=":")
    ax.set_ylabel("requests / threads")
    ax.legend(loc="upper left", fontsize=8, ncol=2)
    ax = axes[2]
    ax.plot(t, series("latency_p50"), label="user latency p50", color="tab:blue")
    ax.plot(t, series("latency_p99"), label="user latency p99", color="tab:red")
    ax.axhline(settings["timeout"], color="gray", linestyle="--", linewidth=1,
               label=f"client timeout ({settings['timeout']:g} s)")
    ax.set_ylabel("seconds (from the intended send,\nby arrival second)")
    ax.set_xlabel("seconds into the run")
    ax.legend(loc="upper left", fontsize=8, ncol=3)
    fig.suptitle(f"{entry['mode']}: {settings['rate']:g} visits/s, third party "
                 f"{settings['normal_delay']:g} s → {settings['incident_delay']:g} s → "
                 f"{settings['normal_delay']:g} s")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def document(data: dict, charts: dict[str, str]) -> list[Block]:
    s = data["settings"]
    blocks: list[Block] = [
        ("h1", "The war story: an incident at the third party, open-loop users"),
        ("p", f"{s['rate']:g} visits/s ({s['arrival']}, seed {s['seed']}) for "
              f"{s['duration']:g} s; the third party answers in {s['normal_delay']:g} s, then "
              f"in {s['incident_delay']:g} s from second {s['before_s']:g} for "
              f"{s['incident_s']:g} s, then in {s['normal_delay']:g} s again. A user gives up "
              f"after {s['timeout']:g} s, waits {s['refresh_delay']:g} s and reloads, up to "
              f"{s['max_attempts']} attempts. Thread pools: {s['workers']} processes x "
              f"{s['threads']} threads; gevent: {s['workers']} x {s['async_cores']}; uWSGI's "
              f"listen queue {s['listen']}."),
        ("p", "Goodput is answers with status 2xx per second. Latency is a user's, from the "
              "intended send of the first attempt to the first success, refreshes included; "
              "a user never served counts with what they had waited when they gave up. "
              "Wasted = requests nginx logged as 499 (the client had gone; the app still "
              "worked on them). Time to recover: from the end of the incident until goodput "
              "is back to 95% of the answers due (visits arriving, shifted by the normal "
              "latency) over 5 s windows with at most 5% failing, and stays so until the "
              "arrivals stop (whole seconds, counted from the first after the incident)."),
        ("table", (COLUMNS, summary_rows(data))),
    ]
    for m in data["modes"]:
        if m["mode"] in charts:
            blocks.append(("h2", m["mode"]))
            if m.get("adds_up"):
                blocks.append(("p", "The per-second series do NOT add up: "
                               + "; ".join(m["adds_up"])))
            blocks.append(("img", charts[m["mode"]]))
            blocks.append(("code", "\n".join(m.get("commands", []))))
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
    out = ["<!doctype html><meta charset='utf-8'><title>The war story</title>",
           "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
           "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;"
           "padding:3px 6px}pre{background:#f4f4f4;padding:8px;overflow-x:auto}</style>"]
    for kind, content in blocks:
        if kind in ("h1", "h2"):
            out.append(f"<{kind}>{html.escape(str(content))}</{kind}>")
        elif kind == "p":
            out.append(f"<p>{html.escape(str(content))}</p>")
        elif kind == "table":
            head, rows = content
            out.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head)
                       + "</tr>" + "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>"
                                                             for c in r) + "</tr>"
                                           for r in rows) + "</table>")
        elif kind == "img":
            data = base64.b64encode((run_dir / str(content)).read_bytes()).decode()
            out.append(f"<img alt='{html.escape(str(content))}' "
                       f"src='data:image/png;base64,{data}' style='max-width:100%'>")
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
    blocks = document(data, charts)
    md, page = run_dir / "story.md", run_dir / "story.html"
    md.write_text(_md(blocks))
    page.write_text(_html(blocks, run_dir))
    return [md, page, *(run_dir / c for c in charts.values())]
