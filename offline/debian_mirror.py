#!/usr/bin/env python3
"""Print the Debian archive this machine's apt already uses, so nothing here names a mirror.

`.ci/run` adds Debian trixie (for Compose v2) and `offline/build-images.sh` builds trixie root
file systems; both must fetch from the archive the machine is set up for (a local mirror or a
caching proxy included), not from a host written into the project. The archive is the URI of
the first `deb` source that serves the main component of a plain suite (not `-security`,
`-updates` or `-backports`), read from the deb822 `*.sources` files and the one-line
`*.list` files, in apt's order. Exit status 1 with a reason when there is none.

    offline/debian_mirror.py                 print the URI (e.g. for mmdebstrap)
    offline/debian_mirror.py --sources-dir D read another apt configuration (tests)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

POCKETS = ("-security", "-updates", "-backports", "-proposed-updates")


def _plain_suite(suite: str) -> bool:
    return bool(suite) and "/" not in suite and not suite.endswith(POCKETS)


def _deb822(text: str) -> list[dict[str, str]]:
    """Stanzas of a deb822 file as field -> value (continuation lines joined, comments dropped)."""
    stanzas: list[dict[str, str]] = []
    current: dict[str, str] = {}
    last: str | None = None
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        if not line.strip():
            if current:
                stanzas.append(current)
            current, last = {}, None
        elif line[0] in " \t" and last:
            current[last] += " " + line.strip()
        elif ":" in line:
            last, value = line.split(":", 1)
            last = last.strip().lower()
            current[last] = value.strip()
    if current:
        stanzas.append(current)
    return stanzas


def from_sources(text: str) -> list[str]:
    uris = []
    for stanza in _deb822(text):
        if stanza.get("enabled", "yes").lower() == "no":
            continue
        if "deb" not in stanza.get("types", "").split():
            continue
        if "main" not in stanza.get("components", "").split():
            continue
        if any(_plain_suite(s) for s in stanza.get("suites", "").split()):
            uris.extend(stanza.get("uris", "").split())
    return uris


def from_list(text: str) -> list[str]:
    uris = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if not words or words[0] != "deb":
            continue
        words = words[1:]
        if words and words[0].startswith("["):  # [arch=amd64 signed-by=...] options
            while words and not words[0].endswith("]"):
                words = words[1:]
            words = words[1:]
        if len(words) >= 3 and _plain_suite(words[1]) and "main" in words[2:]:
            uris.append(words[0])
    return uris


def mirrors(apt_dir: Path) -> list[str]:
    files = [apt_dir / "sources.list"] if (apt_dir / "sources.list").is_file() else []
    parts = apt_dir / "sources.list.d"
    if parts.is_dir():
        files += sorted(p for p in parts.iterdir() if p.suffix in (".list", ".sources"))
    found: list[str] = []
    for path in files:
        text = path.read_text(errors="replace")
        for uri in from_sources(text) if path.suffix == ".sources" else from_list(text):
            if uri.startswith(("http://", "https://", "file:")) and uri not in found:
                found.append(uri.rstrip("/"))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sources-dir",
        type=Path,
        default=Path("/etc/apt"),
        help="apt's configuration directory (default /etc/apt)",
    )
    args = parser.parse_args(argv)
    found = mirrors(args.sources_dir)
    if not found:
        print(
            f"debian_mirror: no Debian archive with a main component in {args.sources_dir}'s "
            "sources; add the one this machine should use to apt's sources",
            file=sys.stderr,
        )
        return 1
    print(found[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
