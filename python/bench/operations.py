"""Operations from Python against the same operations from Rust, on
PostgreSQL: WORKERS workers each cycle assert+release on a node of their
own through the library, for SECONDS seconds; from Python, threads sharing
one `Maintenance`; from Rust, tasks sharing one `Maintenance`
(python/examples/cycles.rs). Rounds alternate the two sides on one
database, made for the run and dropped after.

    python python/bench/operations.py --cycles-bin target/release/examples/cycles \\
        --nodemaint-bin target/release/nodemaint [--workers 8] [--seconds 10] [--rounds 3]

Target (issue 30): Python >= 0.8x Rust, 8 threads, PostgreSQL.
"""

import argparse
import json
import os
import statistics
import subprocess
import threading
import time
import uuid

import psycopg

import nodemaint


def run_python(url, workers, seconds):
    m = nodemaint.Maintenance(url, max_connections=workers)
    deadline = time.monotonic() + seconds
    counts = [0] * workers

    def work(i):
        caller = nodemaint.Caller.system(f"bench-{i}", ["admin"])
        node = f"bench-{i}"
        while time.monotonic() < deadline:
            entry = m.add(caller, node, "operator_hold", reason="bench")
            m.remove(caller, node, entry["uuid"])
            counts[i] += 1

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rate = sum(counts) / (time.monotonic() - started)
    m.close()
    return rate


def run_rust(cycles_bin, url, workers, seconds):
    done = subprocess.run([cycles_bin, url, str(workers), str(seconds)], capture_output=True, text=True, check=True)
    return float(done.stdout.strip())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles-bin", required=True)
    ap.add_argument("--nodemaint-bin", required=True)
    ap.add_argument("--server", default=os.environ.get("NODEMAINT_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432"))
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    name = f"nm_pybench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(args.server + "/postgres", autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    url = f"{args.server}/{name}"
    try:
        subprocess.run([args.nodemaint_bin, "--database-url", url, "db", "upgrade"], check=True, capture_output=True)
        for i in range(args.workers):
            subprocess.run(
                [args.nodemaint_bin, "--database-url", url, "node", "create", "--name", f"bench-{i}"],
                check=True,
                capture_output=True,
            )
        rust, python = [], []
        for r in range(args.rounds):
            rust.append(run_rust(args.cycles_bin, url, args.workers, args.seconds))
            python.append(run_python(url, args.workers, args.seconds))
            print(f"round {r + 1}: rust {rust[-1]:.0f} cycles/s, python {python[-1]:.0f} cycles/s", flush=True)
    finally:
        with psycopg.connect(args.server + "/postgres", autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    ratio = statistics.median(python) / statistics.median(rust)
    print(
        f"{args.workers} workers, PostgreSQL: rust median {statistics.median(rust):.0f} cycles/s, "
        f"python median {statistics.median(python):.0f} cycles/s: python {ratio:.2f}x rust (target >= 0.8)"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rust": rust, "python": python, "ratio": ratio}, f, indent=2)


if __name__ == "__main__":
    main()
