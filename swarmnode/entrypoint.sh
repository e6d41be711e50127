#!/bin/sh
# Starts one engine of the swarm on one machine. The host's cgroups are mounted read-only in a
# container; an engine needs its own writable hierarchies, so each is mounted again here (cgroup
# v1, as the host runs it; v2 where the host runs that). The engine listens on its own socket and
# on TCP 2375 of the nodes' network, which only this machine and the nodes reach: `playground swarm
# --engines` sends the manager its commands there (DOCKER_HOST), so the files a stack names are
# read here and sent. The run's registry is reached two ways over plain HTTP: by its name on the
# nodes' network, and at 127.0.0.1:5000 (carried there by socat), the address this machine
# pushes to, so an image has one name on every engine.
set -eu
node="${SWARMNODE_NAME:?SWARMNODE_NAME names this engine}"
registry="${SWARMNODE_REGISTRY:-playground-registry:5000}"

if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
    mount -o remount,rw /sys/fs/cgroup 2>/dev/null || true
else
    # Docker hands a container the host's hierarchies read-only: read which controllers the
    # host mounts, then mount each again, writable, on a fresh tmpfs (each on its own, as the
    # host mounts it: a controller can be mounted again only with the same options).
    subs=$(awk '$3 == "cgroup" { n = split($2, p, "/"); print p[n] }' /proc/mounts | sort -u)
    umount -R /sys/fs/cgroup 2>/dev/null || umount -l /sys/fs/cgroup
    mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup
    for sub in $subs; do
        mkdir -p "/sys/fs/cgroup/$sub"
        if [ "$sub" = systemd ]; then
            mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd
        else
            mount -t cgroup -o "$sub" cgroup "/sys/fs/cgroup/$sub"
        fi
    done
fi

socat TCP-LISTEN:5000,bind=127.0.0.1,fork,reuseaddr "TCP:${registry}" &

exec dockerd \
    --host unix:///var/run/docker.sock \
    --host tcp://0.0.0.0:2375 \
    --tls=false \
    --insecure-registry "$registry" \
    --cgroup-parent "playground-swarmnode-$node" \
    --storage-driver overlay2 \
    --log-level warn
