"""Proofs of what survives a checkin under SQLAlchemy 1.4 + psycopg2, run on
the fixtures of no-session-tenant-setting: each job sets tenant 1 its way,
then a job that sets nothing takes the same pooled connection and reports
the tenant it sees and the invoices it can read.

    /usr/bin/python3 test/proofs/python/sqlalchemy_proofs.py <proof> <worker-url>
"""

import json
import sys

import psycopg2
import sqlalchemy
from sqlalchemy import text

from fixtures import PROBE, load


def probe(engine):
    with engine.connect() as conn:
        setting, user, rows = conn.execute(text(PROBE)).one()
        return {"setting": setting, "rows": rows}


def after(module, function, engine_name):
    engine = getattr(module, engine_name)
    getattr(module, function)(1)
    return probe(engine)


def proof_session_leak(url):
    bad = load("python/no-session-tenant-setting/bad-sqlalchemy.py", url)
    good = load("python/no-session-tenant-setting/good-sqlalchemy.py", url)
    return {
        "bad": {
            "run_job_begin": after(bad, "run_job_begin", "engine"),
            "run_job_session": after(bad, "run_job_session", "engine"),
            "run_job_autocommit": after(bad, "run_job_autocommit", "autocommit_engine"),
        },
        "good": {
            "run_job_local": after(good, "run_job_local", "engine"),
            "run_job_set_local": after(good, "run_job_set_local", "engine"),
            "run_report_uncommitted": after(good, "run_report_uncommitted", "engine"),
            "run_job_null_pool": after(good, "run_job_null_pool", "null_engine"),
        },
        # The connect listener's SET search_path is on the connection the jobs ran on.
        "listener_search_path": search_path(good.engine),
    }


def proof_function_engine(url):
    # The engine a function makes and checks out in a loop: the turn without a tenant gets the connection
    # the turn before it set tenant 1 on, committed.
    # A second call makes a new engine: its turn without a tenant, first, sees none, though the first call's
    # engine still holds the connection with tenant 1 on it (what makes a function's own one-checkout engine safe).
    bad = load("python/no-session-tenant-setting/bad-function-engine.py", url)
    after_tenant = bad.count_for_each([1, None])
    next_call = bad.count_for_each([None, 1])
    return {"after_tenant": {str(k): v for k, v in after_tenant.items()}, "next_call": {str(k): v for k, v in next_call.items()}}


def proof_hook_skip(url):
    # Hooks that set the tenant before every use: a job with tenant 1, then a job with none, on one pooled connection.
    bad = load("python/no-session-tenant-setting/bad-hook-skips-write.py", url)
    good = load("python/no-session-tenant-setting/good-hook-writes-every-path.py", url)
    return {
        "bad": [bad.count_invoices(1), bad.count_invoices(None)],
        "good": [good.count_invoices(1), good.count_invoices(None)],
    }


def search_path(engine):
    with engine.connect() as conn:
        return conn.execute(text("select current_setting('search_path')")).scalar()


def proof_connect_hook(url):
    """A "connect" listener that writes the opening job's tenant at session level (pool of one connection): tenant 2's
    job, on the same connection, counts tenant 1's rows. The job that sets its tenant for its own transaction counts
    its own, and a probe after it sees no tenant."""
    bad = load("python/no-session-tenant-setting/bad-connect-hook-request-value.py", url)
    good = load("python/no-session-tenant-setting/good-connect-hook-request-value.py", url)
    bad_counts = [bad.count_invoices(1), bad.count_invoices(2), bad.count_invoices(3)]
    with bad.engine.connect() as conn:
        bad_left = conn.execute(text("select current_setting('app.tenant', true)")).scalar()
    good_counts = [good.count_invoices(1), good.count_invoices(2), good.count_invoices(3)]
    with good.engine.connect() as conn:
        good_left = conn.execute(text("select current_setting('app.tenant', true)")).scalar()
    return {"bad": bad_counts, "badLeft": bad_left, "good": good_counts, "goodLeft": good_left}


PROOFS = {"session-leak": proof_session_leak, "function-engine": proof_function_engine, "hook-skip": proof_hook_skip, "connect-hook": proof_connect_hook}


def main():
    name, url = sys.argv[1], sys.argv[2]
    url = url.replace("postgres://", "postgresql://", 1)
    print(json.dumps({"python": sys.version.split()[0], "sqlalchemy": sqlalchemy.__version__, "psycopg2": psycopg2.__version__.split()[0], "result": PROOFS[name](url)}))


if __name__ == "__main__":
    main()
