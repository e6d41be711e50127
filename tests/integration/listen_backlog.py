"""The listen backlogs of the TCP sockets listening on one port, as `ss -ltn` shows them in its
Send-Q column: what the server asked `listen()` for (capped by net.core.somaxconn).

Read from the kernel's socket diagnostics (netlink, NETLINK_SOCK_DIAG), which any user may
dump: the tests run this file with `python3 -c` in a container that shares the scenario
container's network namespace (`docker run --network container:ID`), so neither root nor
`nsenter` nor `ss` in the image is needed. Prints the backlogs, one per listening socket.

    python3 listen_backlog.py PORT
"""

from __future__ import annotations

import socket
import struct
import sys

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST_DUMP = 0x301
NLMSG_ERROR, NLMSG_DONE = 2, 3
TCP_LISTEN = 10
HEADER = struct.Struct("=IHHII")  # nlmsghdr: length, type, flags, seq, pid
# inet_diag_msg after the header: family, state, timer, retrans (4 bytes), the socket id (48:
# sport and dport big-endian, src, dst, interface, cookie), then expires, rqueue, wqueue: a
# listener's wqueue is its backlog.
SPORT_AT, WQUEUE_AT = HEADER.size + 4, HEADER.size + 4 + 48 + 8


def backlogs(port: int) -> list[int]:
    found = []
    for family in (socket.AF_INET, socket.AF_INET6):
        with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG) as nl:
            any_socket = bytes(36) + struct.pack("=III", 0, 0xFFFFFFFF, 0xFFFFFFFF)
            req = struct.pack("=BBBBI", family, socket.IPPROTO_TCP, 0, 0, 1 << TCP_LISTEN)
            req += any_socket
            head = HEADER.pack(
                HEADER.size + len(req), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST_DUMP, 1, 0
            )
            nl.sendto(head + req, (0, 0))
            found += _read_dump(nl, port)
    return found


def _read_dump(nl: socket.socket, port: int) -> list[int]:
    found = []
    while True:
        data = nl.recv(1 << 16)
        offset = 0
        while offset < len(data):
            length, kind, *_ = HEADER.unpack_from(data, offset)
            if kind == NLMSG_ERROR:
                raise SystemExit("socket diagnostics refused the dump")
            if kind == NLMSG_DONE:
                return found
            (sport,) = struct.unpack_from("!H", data, offset + SPORT_AT)
            if sport == port:
                found.append(struct.unpack_from("=I", data, offset + WQUEUE_AT)[0])
            offset += (length + 3) & ~3


if __name__ == "__main__":
    print(" ".join(map(str, backlogs(int(sys.argv[1])))))
