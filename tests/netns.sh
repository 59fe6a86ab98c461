#!/bin/sh
# Run a command inside a private network namespace with multicast on loopback,
# so no LCM packet of the tests reaches the host network (DEVELOPERS rule 1).
# Root uses `unshare -n`; anyone else `unshare -rn` (a user namespace as well).
set -e
if [ "${MOTIOND_NETNS:-}" != 1 ]; then
    if [ "$(id -u)" = 0 ]; then flags=-n; else flags=-rn; fi
    MOTIOND_NETNS=1 exec unshare $flags "$0" "$@"
fi
ip link set lo up
ip link set lo multicast on
ip route add 224.0.0.0/4 dev lo
exec "$@"
