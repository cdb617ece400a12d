#!/bin/bash
# Data parallel over a network on one machine (a benchmark, never a test; root): how much of the
# gradient sum's communication bucketed summing hides behind backward when the two ranks talk TCP
# over a link of a given speed instead of shared memory. Two network namespaces stand in for two
# machines, joined by a veth pair shaped on both ends (tbf: RATE; netem, if the kernel has it:
# DELAY). One rank runs in each, one thread pinned to its own core, OpenMPI forced onto TCP over the
# veth. It runs bench/data_parallel_step for each config (the sum left out / after backward, timed
# alone / during backward) and prints its lines: step times, communication, where backward starts
# and ends, the hidden share, and rank 0's CPU time (user + system; the system part is the kernel's
# TCP work, done on the rank's own core). The first config's hidden share is also printed as
# `hidden share: N %`.
#
#   bench/netns_data_parallel.sh [CONFIG...] [ROUNDS]    configs small|deep (default: deep small), ROUNDS 6
#   RATE=1gbit DELAY=0 BUCKET_MIB=25 BUILD=build-test    the defaults; RATE and DELAY as tc reads them
#
#   sudo RATE=1gbit BUCKET_MIB=2 bench/netns_data_parallel.sh deep 8
#
# Wiring: mpirun runs inside the first namespace. A rank reaches mpirun's PMIx server over TCP, by
# default on loopback, and a namespace has its own loopback: so mpirun's own namespace holds rank 0,
# the second rank enters the other namespace with `ip netns exec`, and the PMIx server listens on the
# veth address (PMIX_MCA_ptl_tcp_if_include) where that rank can reach it.
set -euo pipefail
source_root=$(cd "$(dirname "$0")/.." && pwd)
configs=()
rounds=6
for arg in "$@"; do
  case $arg in
    small|deep) configs+=("$arg") ;;
    *[!0-9]*|'') echo "error: unknown argument '$arg' (expected small, deep or a number of rounds)" >&2; exit 2 ;;
    *) rounds=$arg ;;
  esac
done
[ ${#configs[@]} -gt 0 ] || configs=(deep small)
rate=${RATE:-1gbit}
delay=${DELAY:-0}
bucket_mib=${BUCKET_MIB:-25}
bench=$(realpath "${BUILD:-$source_root/build-test}")/bench/data_parallel_step
ns=(remat-net0 remat-net1)
veth=(remat-veth0 remat-veth1)
address=(10.77.0.1 10.77.0.2)
subnet=10.77.0.0/24

if [ "$(id -u)" -ne 0 ]; then echo "error: network namespaces and tc need root" >&2; exit 1; fi
[ -x "$bench" ] || { echo "error: $bench not built (ninja -C build-test bench/data_parallel_step)" >&2; exit 1; }
for n in "${ns[@]}"; do
  if ip netns list | grep -qw "$n"; then echo "error: network namespace $n already exists; remove it (ip netns del $n)" >&2; exit 1; fi
done

work=$(mktemp -d)
child=
# Safe to run twice and on a half-made setup: every step may find nothing to undo. Deleting a
# namespace deletes its end of the veth (and the qdiscs on it), which deletes the pair.
cleanup() {
  if [ -n "$child" ]; then kill "$child" 2> /dev/null || true; wait "$child" 2> /dev/null || true; fi
  for n in "${ns[@]}"; do ip netns del "$n" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT  # exit runs the EXIT trap
trap 'exit 143' TERM
# Long commands run in the background so that a signal interrupts `wait` instead of waiting for them.
run() {
  local status=0
  "$@" & child=$!
  wait "$child" || status=$?
  child=
  return "$status"
}

for i in 0 1; do ip netns add "${ns[$i]}"; done
ip link add "${veth[0]}" netns "${ns[0]}" type veth peer name "${veth[1]}" netns "${ns[1]}"
for i in 0 1; do
  ip -n "${ns[$i]}" link set lo up
  ip -n "${ns[$i]}" addr add "${address[$i]}/24" dev "${veth[$i]}"
  ip -n "${ns[$i]}" link set "${veth[$i]}" up
  # tbf's burst must hold a whole TSO packet (64 KiB), its latency bounds the queue (rate × 20 ms).
  tc -n "${ns[$i]}" qdisc add dev "${veth[$i]}" root handle 1: tbf rate "$rate" burst 256kb latency 20ms
  if [ "$delay" != 0 ] && ! tc -n "${ns[$i]}" qdisc add dev "${veth[$i]}" parent 1:1 handle 10: netem delay "$delay" limit 100000 2> /dev/null; then
    echo "error: DELAY=$delay needs the netem qdisc, which this kernel lacks (CONFIG_NET_SCH_NETEM); use DELAY=0" >&2
    exit 1
  fi
done

# The link as TCP sees it: one timed 100 MB transfer each way, and the round trip of 1-byte messages.
cat > "$work/link.py" << 'PY'
import socket, sys, time
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode in ("sink", "echo"):
    server = socket.socket()
    server.bind((host, port))
    server.listen(1)
    peer, _ = server.accept()
    peer.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buffer = bytearray(1 << 20)
    while n := peer.recv_into(buffer):
        if mode == "echo": peer.sendall(buffer[:n])
    sys.exit()
for _ in range(100):  # the other side may not be listening yet
    try:
        peer = socket.create_connection((host, port)); break
    except OSError: time.sleep(0.05)
peer.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
if mode == "send":
    size, block = 100_000_000, bytes(1 << 20)
    start = time.perf_counter()
    for _ in range(size // len(block)): peer.sendall(block)
    peer.shutdown(socket.SHUT_WR)
    peer.recv(1)  # returns at the sink's close: everything has arrived
    print(f"{size * 8 / (time.perf_counter() - start) / 1e9:.3f} Gbit/s")
else:
    times = []
    for _ in range(200):
        start = time.perf_counter()
        peer.sendall(b"x"); peer.recv(1)
        times.append(time.perf_counter() - start)
    print(f"{sorted(times)[len(times) // 2] * 1e6:.0f} us")
PY
probe() {  # probe SERVER_MODE CLIENT_MODE FROM TO: the client in namespace FROM, the server in TO
  local server=$1 client=$2 from=$3 to=$4
  ip netns exec "${ns[$to]}" python3 "$work/link.py" "$server" "${address[$to]}" 5201 & local listener=$!
  ip netns exec "${ns[$from]}" python3 "$work/link.py" "$client" "${address[$to]}" 5201
  wait "$listener"
}
echo "link: rate $rate, delay $delay (tbf$([ "$delay" = 0 ] || echo ' + netem')); gradient buckets of $bucket_mib MiB"
echo "  TCP goodput ns0 -> ns1 $(probe sink send 0 1), ns1 -> ns0 $(probe sink send 1 0); round trip $(probe echo ping 0 1) (median of 200)"

mpirun=(ip netns exec "${ns[0]}" env PMIX_MCA_ptl_tcp_if_include="$subnet"
        mpirun --allow-run-as-root --bind-to none --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$subnet"
        -x REMAT_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1)
headline=
for config in "${configs[@]}"; do
  echo "$(date -u +%FT%TZ) load average$(uptime | sed 's/.*load average//')"
  step=("$config" "$rounds" "$bucket_mib")
  run "${mpirun[@]}" -np 1 taskset -c 0 "$bench" "${step[@]}" : -np 1 ip netns exec "${ns[1]}" taskset -c 1 "$bench" "${step[@]}" \
    > "$work/out" 2>&1 || { cat "$work/out" >&2; exit 1; }
  grep "^$config:" "$work/out"
  share=$(sed -n 's/.*hidden \(-\?[0-9]*\) %.*/\1/p' "$work/out")
  [ -n "$share" ] || { echo "error: no hidden share in data_parallel_step's output" >&2; exit 1; }
  [ -n "$headline" ] || headline=$share
done
echo "hidden share: $headline %"
