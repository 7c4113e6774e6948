"""Proofs of Flask-SQLAlchemy 3.0 (Flask 2.2, SQLAlchemy 1.4, psycopg2) on the
fixtures of no-session-tenant-setting and no-local-setting-outside-transaction:
the fixtures' own workers run jobs per tenant, then a job that sets nothing
counts the invoices it can read on the same pooled connection (pool_size=1).

    /usr/bin/python3 test/proofs/python/flask_sqlalchemy_proofs.py <proof> <worker-url>
"""

import json
import sys

import flask
import flask_sqlalchemy
import psycopg2
import sqlalchemy
from sqlalchemy import text

from fixtures import load


def backend_pids(module, app, db):
    """The backend of each job's connection, to show the pool handed the same one back."""
    with app.app_context():
        first = db.session.execute(text("select pg_backend_pid()")).scalar()
        db.session.commit()
        second = db.session.execute(text("select pg_backend_pid()")).scalar()
        db.session.remove()
    with app.app_context():
        third = db.session.execute(text("select pg_backend_pid()")).scalar()
    return first == second == third


def proof_session_leak(url):
    bad = load("python/no-session-tenant-setting/bad-flask-sqlalchemy.py", url)
    good = load("python/no-session-tenant-setting/good-flask-sqlalchemy.py", url)
    with bad.app.app_context():
        session_type = type(bad.db.session).__module__ + "." + type(bad.db.session).__name__
        pool_type = type(bad.db.engine.pool).__name__
        reset = bad.db.engine.pool._reset_on_return
    result = {
        "session": session_type,
        "pool": pool_type,
        "reset_on_return": str(reset),
        "one_connection": backend_pids(bad, bad.app, bad.db),
        "bad": {
            # The job after a tenant's job, in the same app context.
            "bill": bad.work([("bill", 1), ("count", None)]),
            "archive": bad.work([("archive", 1), ("count", None)]),
            "export": bad.work([("export", 1), ("count", None)]),
        },
    }
    # A new app context (a new request): its Session checks out the connection the last one left tenant 1 on.
    result["bad"]["next_context"] = bad.work([("count", None)])
    result["good"] = {
        "bill": good.work([("bill", 1), ("count", None)]),
        "archive": good.work([("archive", 1), ("count", None)]),
        "removed": good.work([("peek", 1), ("count", None)]),
        "next_context": good.work([("count", None)]),
        "null_pool": good.work_reports([1, None]),
    }
    return result


def proof_local_autocommit(url):
    import warnings

    bad = load("python/no-local-setting-outside-transaction/bad-flask-sqlalchemy.py", url)
    good = load("python/no-local-setting-outside-transaction/good-flask-sqlalchemy.py", url)
    out = {}
    with warnings.catch_warnings(record=True):
        with bad.app.app_context():
            out["autocommit_connection"] = bad.count_invoices(1)
            out["late_options_ignored"] = late_options(bad)
        with bad.audit.app_context():
            out["autocommit_engine"] = bad.count_audited(1)
    with good.app.app_context():
        out["session"] = good.count_invoices(1)
        good.db.session.rollback()
        out["serializable"] = good.count_serializable(1)
    return out


def late_options(module):
    # Once the Session has a connection, connection(execution_options=...) is ignored with a warning: still one transaction.
    module.db.session.rollback()
    module.db.session.execute(text("select 1"))
    conn = module.db.session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
    conn.execute(text("select set_config('app.tenant', '1', true)"))
    count = conn.execute(text("select count(*) from invoices")).scalar()
    module.db.session.rollback()
    return count


PROOFS = {"session-leak": proof_session_leak, "local-autocommit": proof_local_autocommit}


def main():
    name, url = sys.argv[1], sys.argv[2]
    url = url.replace("postgres://", "postgresql://", 1)
    versions = {
        "flask_sqlalchemy": flask_sqlalchemy.__version__,
        "flask": flask.__version__,
        "sqlalchemy": sqlalchemy.__version__,
        "psycopg2": psycopg2.__version__.split()[0],
    }
    print(json.dumps({"python": sys.version.split()[0], **versions, "result": PROOFS[name](url)}))


if __name__ == "__main__":
    main()
