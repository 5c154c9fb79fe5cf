"""Launch one training script as many processes, on one host or many.

    python scripts/launch.py --backend jax --processes 2 train.py --epochs 1

The script is the same for every launch (see `processes.py`): it calls
`kzoo.distribution.initialize()`, builds inside `data_parallel()` and
trains. This launcher only starts processes and gives each the variables
its backend's engine reads:

    jax         KERAS_DISTRIBUTION_JOB_ADDRESSES / _NUM_PROCESSES /
                _PROCESS_ID  (read by keras.distribution.initialize)
    tensorflow  TF_CONFIG  (read by MultiWorkerMirroredStrategy)
    torch       torchrun (python -m torch.distributed.run), which sets
                RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT

Many hosts: run the same command on every host with the same `--hosts`
list (the first host coordinates) and that host's `--host-index`:

    # on host a                                  # on host b
    launch.py --hosts a,b --host-index 0 ...     launch.py --hosts a,b --host-index 1 ...

`--dry-run` prints the commands and variables instead of running them.
On timeout or when one process fails, the launcher stops the others.
"""

import argparse
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time

BACKENDS = ("jax", "tensorflow", "torch")
DEFAULT_PORT = 29500
LOOPBACK = "127.0.0.1"
CPU_DEVICES_FLAG = "--xla_force_host_platform_device_count"


def xla_flags_with_cpu_devices(flags, cpu_devices=None):
    """`flags` (an XLA_FLAGS value) with its virtual CPU device count
    replaced by `cpu_devices` (dropped when None): the other flags, a
    user's compiler options say, are kept."""
    kept = [flag for flag in flags.split()
            if flag.split("=")[0] != CPU_DEVICES_FLAG]
    if cpu_devices:
        kept.append(f"{CPU_DEVICES_FLAG}={cpu_devices}")
    return " ".join(kept)


def free_ports(count, host=LOOPBACK):
    """`count` distinct free TCP ports on `host` (held open together, so no
    two are the same)."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((host, 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


class Plan:
    """The processes this host starts: (argv, extra environment) pairs."""

    def __init__(self, backend, script_argv, processes=1, hosts=(LOOPBACK,),
                 host_index=0, port=None, cpu_devices=None, python=None):
        if backend not in BACKENDS:
            raise ValueError(f"--backend must be one of {BACKENDS}, got "
                             f"{backend!r}.")
        if not 0 <= host_index < len(hosts):
            raise ValueError(f"--host-index {host_index} is not an index of "
                             f"--hosts {list(hosts)}.")
        self.backend = backend
        self.script_argv = list(script_argv)
        self.processes = int(processes)
        self.hosts = list(hosts)
        self.host_index = int(host_index)
        self.cpu_devices = cpu_devices
        self.python = python or sys.executable
        local = self.hosts == [LOOPBACK] or self.hosts == ["localhost"]
        # Local runs take free ports; a cluster agrees on fixed ones.
        if port is None:
            needed = self.processes if backend == "tensorflow" else 1
            self.ports = free_ports(needed) if local else \
                [DEFAULT_PORT + i for i in range(needed)]
        else:
            self.ports = [int(port) + i for i in range(self.processes)]
        self.local = local

    @property
    def world_size(self):
        return len(self.hosts) * self.processes

    def base_env(self):
        env = {"KERAS_BACKEND": self.backend}
        if self.cpu_devices:
            env["XLA_FLAGS"] = xla_flags_with_cpu_devices(
                os.environ.get("XLA_FLAGS", ""), self.cpu_devices)
        return env

    def commands(self):
        """[(argv, env)] for this host."""
        script = [self.python] + self.script_argv
        coordinator = f"{self.hosts[0]}:{self.ports[0]}"
        if self.backend == "torch":
            # torchrun starts this host's processes itself.
            argv = [self.python, "-m", "torch.distributed.run",
                    f"--nnodes={len(self.hosts)}",
                    f"--node-rank={self.host_index}",
                    f"--nproc-per-node={self.processes}",
                    f"--master-addr={self.hosts[0]}",
                    f"--master-port={self.ports[0]}"] + self.script_argv
            env = self.base_env()
            if self.local:
                env["GLOO_SOCKET_IFNAME"] = "lo"
            return [(argv, env)]
        runs = []
        workers = [f"{host}:{port}" for host in self.hosts
                   for port in self.ports]
        for local_index in range(self.processes):
            index = self.host_index * self.processes + local_index
            env = self.base_env()
            if self.world_size > 1 and self.backend == "jax":
                env.update({
                    "KERAS_DISTRIBUTION_JOB_ADDRESSES": coordinator,
                    "KERAS_DISTRIBUTION_NUM_PROCESSES": str(self.world_size),
                    "KERAS_DISTRIBUTION_PROCESS_ID": str(index),
                })
            elif self.world_size > 1:
                env["TF_CONFIG"] = json.dumps({
                    "cluster": {"worker": workers},
                    "task": {"type": "worker", "index": index}})
            runs.append((script, env))
        return runs

    def describe(self):
        lines = []
        for argv, env in self.commands():
            variables = " ".join(f"{k}={shlex.quote(v)}"
                                 for k, v in sorted(env.items()))
            lines.append(f"{variables} {shlex.join(argv)}")
        return "\n".join(lines)


def run(plan, timeout=None):
    """Start the plan's processes, wait, and return the first non-zero exit
    status (or 0). Stops every process on timeout (status 124) or as soon
    as one fails."""
    children = []
    for argv, env in plan.commands():
        children.append(subprocess.Popen(
            argv, env={**os.environ, **env}, start_new_session=True))
    deadline = None if timeout is None else time.monotonic() + timeout
    status = 0
    try:
        while None in [child.poll() for child in children]:  # poll all
            failed = [c.returncode for c in children
                      if c.returncode not in (None, 0)]
            if failed:
                status = failed[0]
                break
            if deadline is not None and time.monotonic() > deadline:
                print(f"launch: timed out after {timeout}s; stopping.",
                      file=sys.stderr)
                status = 124
                break
            time.sleep(0.2)
        else:
            status = next((c.returncode for c in children if c.returncode),
                          0)
    finally:
        _stop(children)
    return status


def _stop(children, grace=5.0):
    """Stop our children's process groups (torchrun's workers included)."""
    alive = [c for c in children if c.poll() is None]
    for child in alive:
        _signal_group(child, signal.SIGTERM)
    end = time.monotonic() + grace
    for child in alive:
        try:
            child.wait(max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(child, signal.SIGKILL)
            child.wait()


def _signal_group(child, sig):
    try:
        os.killpg(child.pid, sig)
    except ProcessLookupError:
        pass


def build_parser():
    parser = argparse.ArgumentParser(
        prog="launch.py", description=__doc__.split("\n\n")[0],
        epilog="Everything after the script path is passed to the script.")
    parser.add_argument("--backend", default=os.environ.get(
        "KERAS_BACKEND", "jax"), choices=BACKENDS)
    parser.add_argument("--processes", type=int, default=1,
                        help="processes on this host (one per GPU/TPU host)")
    parser.add_argument("--hosts", default=LOOPBACK,
                        help="comma-separated hosts; the first coordinates")
    parser.add_argument("--host-index", type=int, default=0,
                        help="this host's index in --hosts")
    parser.add_argument("--port", type=int, default=None,
                        help="coordinator port (TF: first worker port); "
                             "default: free ports locally, 29500 on a "
                             "cluster")
    parser.add_argument("--cpu-devices", type=int, default=None,
                        help="JAX: virtual CPU devices per process")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds before every process is stopped")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the commands instead of running them")
    parser.add_argument("script", help="the training script")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    plan = Plan(args.backend, [args.script] + args.script_args,
                processes=args.processes, hosts=args.hosts.split(","),
                host_index=args.host_index, port=args.port,
                cpu_devices=args.cpu_devices)
    if args.dry_run:
        print(plan.describe())
        return 0
    return run(plan, timeout=args.timeout)


if __name__ == "__main__":
    sys.exit(main())
