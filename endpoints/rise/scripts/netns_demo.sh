#!/usr/bin/env bash
# Runs rise host and guest in two network namespaces joined by a veth pair for DURATION_S
# seconds, optionally with an htb rate limit on the guest's uplink (no netem on this kernel:
# no added delay). Needs root. Everything it creates is named with PREFIX and removed on exit.
#
#   endpoints/rise/scripts/netns_demo.sh OUT_DIR [UPLINK_MBIT|none] [extra rise flags...]
set -euo pipefail
OUT=${1:?usage: netns_demo.sh OUT_DIR [UPLINK_MBIT|none] [rise flags...]}
UPLINK=${2:-none}
shift $(( $# >= 2 ? 2 : 1 ))
PREFIX=${PREFIX:-qs}
DURATION_S=${DURATION_S:-10}
BIN=${RISE_BIN:-$(cd "$(dirname "$0")/../../.." && pwd)/target/release/rise}
H=${PREFIX}-h G=${PREFIX}-g
cleanup() {
  [[ -n "${HPID:-}" ]] && kill "$HPID" 2>/dev/null || true
  ip netns del "$H" 2>/dev/null || true
  ip netns del "$G" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$H"; ip netns add "$G"
ip link add "${PREFIX}-vh" type veth peer name "${PREFIX}-vg"
ip link set "${PREFIX}-vh" netns "$H"; ip link set "${PREFIX}-vg" netns "$G"
ip -n "$H" addr add 10.77.0.2/24 dev "${PREFIX}-vh"; ip -n "$G" addr add 10.77.0.1/24 dev "${PREFIX}-vg"
for ns in "$H" "$G"; do ip -n "$ns" link set lo up; done
ip -n "$H" link set "${PREFIX}-vh" up; ip -n "$G" link set "${PREFIX}-vg" up
if [[ "$UPLINK" != none ]]; then
  # Guest uplink: htb at UPLINK Mbit/s, a bfifo of about 20 ms at that rate.
  q=$(( UPLINK * 1000000 / 8 / 50 ))
  ip netns exec "$G" tc qdisc add dev "${PREFIX}-vg" root handle 1: htb default 1
  ip netns exec "$G" tc class add dev "${PREFIX}-vg" parent 1: classid 1:1 htb rate "${UPLINK}mbit" ceil "${UPLINK}mbit"
  ip netns exec "$G" tc qdisc add dev "${PREFIX}-vg" parent 1:1 bfifo limit "$q"
fi
rm -rf "$OUT"; mkdir -p "$OUT"
ip netns exec "$H" "$BIN" --role host --bind 10.77.0.2:4433 --cert-out "$OUT/cert.der" \
  --log-dir "$OUT/host" --duration-s "$DURATION_S" "$@" 2>"$OUT/host.err" &
HPID=$!
ip netns exec "$G" "$BIN" --role guest --connect 10.77.0.2:4433 --cert "$OUT/cert.der" \
  --log-dir "$OUT/guest" --duration-s "$DURATION_S" "$@" 2>"$OUT/guest.err"
echo "guest exit $?"
wait "$HPID"; echo "host exit $?"; HPID=
