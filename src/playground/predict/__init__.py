"""The model of the incident: `playground predict`, the story's system as a discrete-event
simulation on a clock of its own (:mod:`.clock`, SimPy's order of events), answering in
seconds and without Docker.

Each part is modelled from what the playground runs, not fitted to a measured row:
:mod:`.schedule` the generator's arrivals and reloads (the same rate and seed give the same
times), :mod:`.system` the servers' settings read from the registry and the remedies' compose
overrides and nginx lines, :mod:`.servers` the queues as the servers keep them (uWSGI's shared
listen queue, Gunicorn's per-worker queues and sockets, gevent), :mod:`.haproxy` HAProxy's
bounded queue where a remedy puts it between nginx and the app, :mod:`.app` the Flask app's
call to the third party (its timeout, the deadline, retries, the budget, the breaker),
:mod:`.simulate` the users and nginx around them, and :mod:`.run` the prediction as a story run, through the same
analysis, verdicts and chart as a measured one (:mod:`playground.incident`).
"""
