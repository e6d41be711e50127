#!/bin/sh
# Let apt fetch source packages from the very archives the image already uses: every `deb`
# entry of its own sources (one-line lists and deb822 files alike) gets a `deb-src` twin.
# No archive host is named here; the image's configuration decides.
set -eu
for list in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$list" ] || continue
    sed -n 's/^deb /deb-src /p' "$list" > "$list.src"
    mv "$list.src" "/etc/apt/sources.list.d/$(basename "$list" .list)-src.list"
done
for sources in /etc/apt/sources.list.d/*.sources; do
    [ -f "$sources" ] || continue
    sed -i 's/^Types: deb$/Types: deb deb-src/' "$sources"
done
