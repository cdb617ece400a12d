#!/bin/bash
# Data parallel over a network, simulated on one machine (a benchmark, never a test; needs root).
# bench/data_parallel_step measures how much of the gradient sum's communication summing in buckets
# hides behind backward; on one machine its two ranks talk through shared memory, where the copy is
# their own CPU work (docs/distributed.md). Here they talk TCP over a link of a chosen speed: two
# network namespaces stand in for two machines, joined by a veth pair shaped on both ends with tc
# (tbf at RATE; netem adds DELAY where the kernel has it, which this project's VM kernel does not).
# One rank in each namespace, one thread each, pinned to cores 0 and 1.
#
# Prints the link as TCP measures it (goodput each way, with the CPU time it cost the two ends; the
# round trip), then for each config data_parallel_step's two lines: step times (the sum left out /
# after backward, timed alone / during backward), the communication, where backward starts and ends,
# the hidden share, and rank 0's CPU time as user + system (system: mostly the kernel's TCP work, on
# the rank's own core). Last, the first config's share alone: `hidden share: N %`.
#
#   bench/netns_data_parallel.sh [CONFIG...] [ROUNDS]    configs small|deep (default: deep small), ROUNDS 6
#   RATE=1gbit DELAY=0 BUCKET_MIB=4 BUILD=build-test    the defaults; RATE and DELAY as tc reads them
#   SEND_BUFFER=4194304                                   the most a socket holds for sending (tcp_wmem's max)
#   MTU=9000                                              the link's MTU (1500 by default; 9000: jumbo frames)
#   MPI_ARGS="--mca btl_tcp_progress_thread 1"            more mpirun options (none by default)
#
#   sudo RATE=1gbit BUCKET_MIB=4 bench/netns_data_parallel.sh deep 8
#
# Wiring: a rank reaches mpirun's PMIx server over TCP, on loopback by default, and a namespace has a
# loopback of its own. So mpirun runs in the first namespace next to rank 0, the other rank enters the
# second namespace with `ip netns exec`, and the PMIx server listens on the veth address
# (PMIX_MCA_ptl_tcp_if_include), which that rank can reach.
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
bucket_mib=${BUCKET_MIB:-4}
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
# Safe to run twice and on a half-made setup. Every process in the namespaces is this script's;
# deleting a namespace deletes its end of the veth (and the qdiscs on it), which deletes the pair.
cleanup() {
  for n in "${ns[@]}"; do ip netns pids "$n" 2> /dev/null | xargs -r kill 2> /dev/null || true; done
  [ -z "$child" ] || wait "$child" 2> /dev/null || true
  for n in "${ns[@]}"; do ip netns del "$n" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT  # exit runs the EXIT trap
trap 'exit 143' TERM
# mpirun runs in the background: a signal then interrupts `wait` at once, where bash would wait for
# a foreground command to end before running the trap.
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
  # OpenMPI moves data only inside MPI calls: between two of them, TCP sends what the socket holds.
  [ -z "${SEND_BUFFER:-}" ] || ip netns exec "${ns[$i]}" sysctl -qw net.ipv4.tcp_wmem="4096 16384 $SEND_BUFFER"
  ip -n "${ns[$i]}" addr add "${address[$i]}/24" dev "${veth[$i]}"
  [ -z "${MTU:-}" ] || ip -n "${ns[$i]}" link set "${veth[$i]}" mtu "$MTU"
  ip -n "${ns[$i]}" link set "${veth[$i]}" up
  # tbf's burst must hold a whole TSO packet (64 KiB), its latency bounds the queue (rate × 20 ms).
  tc -n "${ns[$i]}" qdisc add dev "${veth[$i]}" root handle 1: tbf rate "$rate" burst 256kb latency 20ms
  if [ "$delay" != 0 ] && ! tc -n "${ns[$i]}" qdisc add dev "${veth[$i]}" parent 1:1 handle 10: netem delay "$delay" limit 100000 2> /dev/null; then
    echo "error: DELAY=$delay needs the netem qdisc, which this kernel lacks (CONFIG_NET_SCH_NETEM); use DELAY=0" >&2
    exit 1
  fi
done

# The link as TCP sees it: a timed 100 MB transfer each way, with the CPU time it cost each end
# (blocking sockets, so no polling: the system part is the kernel's TCP work), and the round trip of
# 1-byte messages.
cat > "$work/link.py" << 'PY'
import resource, socket, sys, time
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])

def cpu_ms():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime * 1e3, u.ru_stime * 1e3

if mode in ("sink", "echo"):
    server = socket.socket()
    server.bind((host, port))
    server.listen(1)
    peer, _ = server.accept()
    peer.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buffer = bytearray(1 << 20)
    start = cpu_ms()
    while n := peer.recv_into(buffer):
        if mode == "echo": peer.sendall(buffer[:n])
    end = cpu_ms()
    peer.sendall(f"{end[0] - start[0]:.0f} {end[1] - start[1]:.0f}".encode())  # the receiver's CPU, to the sender
    sys.exit()
for _ in range(100):  # the other side may not be listening yet
    try:
        peer = socket.create_connection((host, port)); break
    except OSError: time.sleep(0.05)
peer.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
if mode == "send":
    size, block = 100_000_000, bytes(1 << 20)
    start, cpu_start = time.perf_counter(), cpu_ms()
    for _ in range(size // len(block)): peer.sendall(block)
    peer.shutdown(socket.SHUT_WR)
    user, system = peer.recv(100).decode().split()  # comes once everything has arrived
    seconds, cpu_end = time.perf_counter() - start, cpu_ms()
    print(f"{size * 8 / seconds / 1e9:.3f} Gbit/s (CPU, user + system ms: sender {cpu_end[0] - cpu_start[0]:.0f} + "
          f"{cpu_end[1] - cpu_start[1]:.0f}, receiver {user} + {system})")
else:
    times = []
    for _ in range(200):
        start = time.perf_counter()
        peer.sendall(b"x"); peer.recv(1)
        times.append(time.perf_counter() - start)
    peer.shutdown(socket.SHUT_WR)
    peer.recv(100)
    print(f"{sorted(times)[len(times) // 2] * 1e6:.0f} us")
PY
probe() {  # probe SERVER_MODE CLIENT_MODE FROM TO: the client in namespace FROM, the server in TO
  local server=$1 client=$2 from=$3 to=$4
  ip netns exec "${ns[$to]}" python3 "$work/link.py" "$server" "${address[$to]}" 5201 & local listener=$!
  ip netns exec "${ns[$from]}" python3 "$work/link.py" "$client" "${address[$to]}" 5201
  wait "$listener"
}
echo "link: rate $rate, delay $delay, MTU $(ip -n "${ns[0]}" link show "${veth[0]}" | sed -n 's/.* mtu \([0-9]*\).*/\1/p') (tbf$([ "$delay" = 0 ] || echo ' + netem')); gradient buckets of $bucket_mib MiB;" \
  "send buffer up to $(ip netns exec "${ns[0]}" sysctl -n net.ipv4.tcp_wmem | awk '{print $3}') bytes"
echo "  TCP, 100 MB ns0 -> ns1: $(probe sink send 0 1)"
echo "  TCP, 100 MB ns1 -> ns0: $(probe sink send 1 0)"
echo "  round trip $(probe echo ping 0 1) (median of 200)"

read -ra mpi_args <<< "${MPI_ARGS:-}"
# shellcheck disable=SC2054  # tcp,self is one argument
mpirun=(ip netns exec "${ns[0]}" env PMIX_MCA_ptl_tcp_if_include="$subnet"
        mpirun --allow-run-as-root --bind-to none --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$subnet"
        -x REMAT_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "${mpi_args[@]}")
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
