"""`playground scale`: a concurrency sweep up to c=10,000 with the scale overrides (scale/)."""

from __future__ import annotations

import argparse

from rich.console import Console

from playground.bench.scale import (
    SCALE_DEFAULT,
    SCALE_PROBE,
    SCALE_SWEEP,
    SCALE_UTILISATION,
    ScaleSweep,
)
from playground.commands import options
from playground.commands.bench import measure
from playground.commands.options import Subparsers
from playground.core import contenders
from playground.core.errors import UsageError
from playground.core.results import ScaleRunSettings
from playground.core.scenarios import ARES_VARIANTS, resolve


def add_parser(sub: Subparsers) -> None:
    scale = sub.add_parser(
        "scale",
        help="concurrency sweep up to c=10,000 with the scale overrides (scale/)",
        parents=[options.session(), options.resumable(), options.pinnable()],
    )
    scale.add_argument(
        "names",
        nargs="*",
        metavar="SCENARIO[@C,...]",
        help="modes to sweep; default: the gevent and thread-based scenarios. NAME@C,... "
        "sweeps that mode at those concurrencies only (e.g. nginx-uwsgi@2000)",
    )
    scale.add_argument(
        "--contenders", action="store_true", help="sweep the 2026 contenders (contenders/) instead"
    )
    scale.add_argument(
        "--ares",
        action="store_true",
        help="also sweep the gevent scenarios with the c-ares resolver",
    )
    scale.add_argument(
        "--sweep",
        type=options.positive_int_list,
        default=SCALE_SWEEP,
        help="concurrencies (default %(default)s)",
    )
    scale.add_argument(
        "--utilisation",
        type=options.fraction,
        default=SCALE_UTILISATION,
        help="fraction of one core the ideal rate may use, above 0 and at most "
        "1 (default %(default)s)",
    )
    scale.add_argument(
        "--probe", default=SCALE_PROBE, help="scenario whose CPU per request sets the delays"
    )
    scale.add_argument(
        "--stop-below",
        type=options.positive(float),
        default=0.5,
        help="skip a mode's higher concurrencies once its efficiency falls "
        "below this (default %(default)s)",
    )
    scale.add_argument("--repeat", type=options.positive(int), default=1)
    scale.add_argument(
        "--from-host",
        action="store_true",
        help="load from this host through the published ports (Docker's "
        "port-forwarding proxy included; see scale/README.md)",
    )
    scale.set_defaults(handler=cmd_scale)


def cmd_scale(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Sweep concurrency up to 10,000 with delays long enough that CPU is not the limit
    (see `playground.bench.scale`)."""
    names = args.names or (
        [t.name for t in contenders.SCALE] if args.contenders else list(SCALE_DEFAULT)
    )
    if args.ares:
        names += [t.name for t in ARES_VARIANTS if t.name not in names]
    names, own = _own_concurrencies(names)
    sweep = tuple(sorted({*args.sweep, *(c for cs in own.values() for c in cs)}))
    plan = ScaleSweep(
        probe_scenario=args.probe,
        targets=tuple(resolve(names=names)),
        sweep=tuple(args.sweep),
        own=own,
        utilisation=args.utilisation,
        repeat=args.repeat,
        stop_below=args.stop_below,
        wait_timeout_s=args.wait_timeout,
        from_host=args.from_host,
        overrides_dir=options.ROOT / "scale",
    )
    settings = ScaleRunSettings(
        tool="ab", repeat=args.repeat, sweep=list(sweep), from_host=args.from_host
    )
    return measure(
        args,
        out,
        err,
        plan=plan,
        settings=settings,
        tool="ab",
        targets=(*plan.targets, plan.probe),
        kind="scale",
    )


def _own_concurrencies(names: list[str]) -> tuple[list[str], dict[str, tuple[int, ...]]]:
    """NAME@C,...: that mode at its own concurrencies (the delays cover every one of them)."""
    own = {}
    bare = []
    for name in names:
        name, at, cs = name.partition("@")
        bare.append(name)
        if at:
            try:
                own[name] = options.positive_int_list(cs)
            except argparse.ArgumentTypeError as exc:
                raise UsageError(f"{name}@{cs}: {exc}") from None
    return bare, own
