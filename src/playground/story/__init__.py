"""The war story: open-loop users through an incident at the third party.

`playground story` (:mod:`playground.commands.story`) takes the registry's story targets and
the settings (:mod:`playground.storymodel`), :mod:`.run` measures each target (the
generator's command line: :mod:`.plan`; what the servers show: :mod:`.serverside`; the
figures: :mod:`.analysis`, :mod:`.sweep`, :mod:`.closedloop`; the verdicts: :mod:`.findings`),
and :mod:`.report` writes the report (its sections: :mod:`.loadcurve` for the sweep and the
cliff, :mod:`.othertools` for ab and oha; its cells: :mod:`.cells`; the per-second charts:
:mod:`.charts`); :mod:`.compare` sets two runs side by side.
"""
