"""The war story: open-loop users through an incident at the third party.

`playground story` (:mod:`playground.commands.story`) takes the registry's story targets and
the settings (:mod:`playground.incident.settings`); :mod:`.run` measures each target through the
incident (the command lines: :mod:`.plan`; what the servers show: :mod:`.serverside`; the
figures: :mod:`.analysis`; the verdicts: :mod:`.findings`; over repeats: :mod:`.repeats`;
Little's law's prediction: :mod:`.capacity`), and :mod:`.report` writes the report (the
per-second charts: :mod:`.charts`; how a figure reads in a cell: :mod:`.cells`). Each other
part is one module, from what it measures to its section of the report: :mod:`.closedloop`
(ab through the same incident), :mod:`.sweep` (goodput against offered load),
:mod:`.crosscheck` (the generator against oha) and :mod:`.cliff` (a pool's edge, predicted and
found), each measured by its own `...run` module (:mod:`.sweeprun`, :mod:`.crosscheckrun`,
:mod:`.cliffrun`), so the report imports no runner. :mod:`.compare` sets two runs side by side.
"""
