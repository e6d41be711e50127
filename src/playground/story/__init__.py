"""The war story: an open-loop load through an incident at the third party, mode by mode."""
