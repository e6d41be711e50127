"""The bench: the closed-loop matrix (`playground run`, `playground scale`).

By job: :mod:`.plan` (what to measure, at which loads), :mod:`.runner` (up, check, warm up,
load with samples, down; one entry saved per measurement), :mod:`.entry` (an entry's figures
from its repeats), :mod:`.diagnosis` (what the figures mean), :mod:`.steady` (ab's
per-request timeline), :mod:`.hostpath` (Docker's port-forwarding proxy, for a load from the
host), :mod:`.scale` (the scale profile's settings).
"""
