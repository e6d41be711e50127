"""The war story: open-loop users through an incident at the third party.

`playground story` (:mod:`playground.commands.story`) takes the registry's story targets and
the settings (:mod:`playground.storymodel`); :mod:`.run` measures each target through the
incident (the command lines: :mod:`.plan`; what the servers show: :mod:`.serverside`; the
figures: :mod:`.analysis` and, for ab, :mod:`.closedloop`; the verdicts: :mod:`.findings`;
over repeats: :mod:`.repeats`), and :mod:`.sweep`, :mod:`.cliff` and :mod:`.crosscheck`
measure their own parts. :mod:`.report` writes the report (the sweep's and the cliff's
sections: :mod:`.loadcurve`; ab's and oha's: :mod:`.othertools`; the per-second charts:
:mod:`.charts`; the cells: :mod:`.cells`); :mod:`.compare` sets two runs side by side.
"""
