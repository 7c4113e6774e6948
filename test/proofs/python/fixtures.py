"""Loads fixture modules for the Python proofs: the proofs run the fixtures' own code.

A fixture reads its database from DATABASE_URL, which the proof sets to the
seeded test database (the worker role, subject to RLS) before importing it.
"""

import asyncio
import importlib.util
import json
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def load(relative_path, url, name=None):
    """Imports fixtures/<relative_path> as a fresh module, with DATABASE_URL=url."""
    os.environ["DATABASE_URL"] = url
    path = os.path.join(ROOT, "fixtures", relative_path)
    module_name = name or "fixture_" + relative_path.replace("/", "_").replace("-", "_").replace(".py", "")
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def run_async_proof(proofs, versions):
    """The command line of an async proof script: runs the proof named by argv[1] with the URLs after it (the worker's,
    then the owner's where a proof needs it) and prints the Python version, `versions` and the result as JSON."""
    name, urls = sys.argv[1], [url.replace("postgres://", "postgresql://", 1) for url in sys.argv[2:]]
    result = asyncio.run(proofs[name](*urls))
    print(json.dumps({"python": sys.version.split()[0], **versions, "result": result}))


PROBE = "select current_setting('app.tenant', true), current_user::text, (select count(*) from invoices)"


def load_psycopg(relative_path, url):
    """Imports a psycopg fixture with every pool and connection it makes pointed at `url`.

    The fixtures write conninfo strings like "dbname=app" and open their pools
    at import; here each pool is made with the test database's URL and left
    closed (open=False), so the proof opens only the pool it measures, with
    the fixture's own options (reset=, configure=, kwargs=, sizes).
    """
    import psycopg
    import psycopg_pool

    originals = (psycopg_pool.ConnectionPool, psycopg_pool.AsyncConnectionPool, psycopg.connect)

    import inspect

    # psycopg_pool 3.1 has no check= (3.2 added it): the proofs measure reset= and configure=.
    class TestPool(originals[0]):
        def __init__(self, conninfo="", *args, **kwargs):
            kwargs["open"] = False
            if "check" not in inspect.signature(originals[0].__init__).parameters:
                kwargs.pop("check", None)
            super().__init__(url, *args, **kwargs)

    class TestAsyncPool(originals[1]):
        def __init__(self, conninfo="", *args, **kwargs):
            kwargs["open"] = False
            if "check" not in inspect.signature(originals[1].__init__).parameters:
                kwargs.pop("check", None)
            super().__init__(url, *args, **kwargs)

    if not hasattr(TestPool, "check_connection"):
        # psycopg_pool 3.2's check callback, which the fixtures name; 3.1 has none.
        TestPool.check_connection = staticmethod(lambda conn: conn.execute("select 1"))

    def test_connect(conninfo="", **kwargs):
        return originals[2](url, **kwargs)

    import psycopg2

    legacy_connect = psycopg2.connect

    def test_legacy_connect(dsn=None, *args, **kwargs):
        return legacy_connect(url, **kwargs)

    psycopg_pool.ConnectionPool, psycopg_pool.AsyncConnectionPool, psycopg.connect = TestPool, TestAsyncPool, test_connect
    psycopg2.connect = test_legacy_connect
    try:
        return load(relative_path, url)
    finally:
        psycopg_pool.ConnectionPool, psycopg_pool.AsyncConnectionPool, psycopg.connect = originals
        psycopg2.connect = legacy_connect
