"""Cost of pgq_audit.guard per job on psycopg_pool, run by bench/python-guard.ts.

The seed's job on a ConnectionPool of 1: a checkout, set_config('app.tenant',
%s, true), one primary-key query, in psycopg's implicit transaction (BEGIN
and COMMIT are round trips of their own), and the return. Variants:
unguarded; guarded (every checkout checked: one round trip); guarded with
sample_rate=0.1. The pools take turns job by job and are rebuilt every 100
rounds, so drift hits all alike. Prints one JSON object; asserts nothing.

    python3 bench/python_guard_bench.py <worker-url> <jobs> <warmup>
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from typing import Any, Callable, Dict, List

import psycopg
import psycopg_pool
from psycopg_pool import ConnectionPool

from pgq_audit.guard import guard_pool, guard_stats

EPOCH = 100


def job(pool: ConnectionPool, tenant: int, invoice: int) -> None:
    with pool.connection() as conn:
        conn.execute("select set_config('app.tenant', %s, true)", [str(tenant)])
        conn.execute("select amount_cents from invoices where id = %s", [invoice]).fetchone()


def main() -> None:
    url, jobs, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("select set_config('app.tenant', '1', false)")
        # Invoices the worker may read, one per tenant 1..100 (the query finds its row under RLS).
        firsts: List[Any] = []
        for tenant in range(1, 101):
            conn.execute("select set_config('app.tenant', %s, false)", [str(tenant)])
            firsts.append((tenant, conn.execute("select min(id) from invoices").fetchone()[0]))
        version = conn.execute("show server_version").fetchone()[0]

    def make(**guard: Any) -> Callable[[], ConnectionPool]:
        def build() -> ConnectionPool:
            pool = ConnectionPool(url, min_size=1, max_size=1, open=False)
            if guard:
                pool = guard_pool(pool, settings=["app.tenant"], **guard)
            pool.open(wait=True, timeout=30)
            return pool

        return build

    variants: List[Dict[str, Any]] = [
        {"name": "unguarded", "build": make(), "samples": [], "checks": 0, "runs": 0},
        {"name": "guarded", "build": make(sample_rate=1.0), "samples": [], "checks": 0, "runs": 0},
        {"name": "guarded, sample_rate=0.1", "build": make(sample_rate=0.1), "samples": [], "checks": 0, "runs": 0},
    ]
    for start in range(0, jobs, EPOCH):
        pools = [v["build"]() for v in variants]
        for k, pool in enumerate(pools):
            for _ in range(5):
                job(pool, *firsts[0])
            variants[k]["runs"] += 5
        for i in range(start, min(jobs, start + EPOCH)):
            tenant, invoice = firsts[i % len(firsts)]
            for k in range(len(variants)):
                v = (i + k) % len(variants)  # rotate who goes first
                t0 = time.perf_counter_ns()
                job(pools[v], tenant, invoice)
                micros = (time.perf_counter_ns() - t0) / 1000
                variants[v]["runs"] += 1
                if i >= warmup:
                    variants[v]["samples"].append(micros)
        for k, pool in enumerate(pools):
            stats = guard_stats(pool)
            variants[k]["checks"] += stats.checks if stats else 0
            pool.close()

    base = statistics.median(variants[0]["samples"])
    base_p10 = statistics.quantiles(variants[0]["samples"], n=10)[0]
    rows = []
    for v in variants:
        median = statistics.median(v["samples"])
        deciles = statistics.quantiles(v["samples"], n=10)
        rows.append(
            {
                "variant": v["name"],
                "median_us": round(median, 1),
                "ratio": round(median / base, 3),
                "p10_us": round(deciles[0], 1),
                "p10_ratio": round(deciles[0] / base_p10, 3),
                "p90_us": round(deciles[-1], 1),
                "checks": None if v["name"] == "unguarded" else v["checks"],
                "runs": v["runs"],
            }
        )
    print(
        json.dumps(
            {
                "jobs": jobs,
                "warmup": warmup,
                "server": version,
                "python": sys.version.split()[0],
                "psycopg": psycopg.__version__,
                "psycopg_pool": psycopg_pool.__version__,
                "rows": rows,
            }
        )
    )


if __name__ == "__main__":
    main()
