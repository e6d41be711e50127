"""The war story on a Docker Swarm stack (`playground swarm`, docs/cluster.md): the stack file
made from the same compose files, the app replicated, the open-loop generator run as several
senders whose raw records are merged into one run."""
