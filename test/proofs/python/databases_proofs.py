"""Proofs of databases (encode) 0.7's calls, run on the fixtures. The fixtures
name their servers by URL; here every Database keeps its URL's scheme (which
picks the backend: postgresql+aiopg:// is aiopg, postgresql:// asyncpg) and
is pointed at the test database with one pool connection, so the next call
gets the connection the job used.

    /usr/bin/python3 test/proofs/python/databases_proofs.py <proof> <worker-url>
"""

from urllib.parse import urlsplit

import databases

from fixtures import PROBE, load, run_async_proof


def pointed_at(url):
    """databases.Database(url_of_fixture) -> the test database, same scheme, one connection."""
    test = urlsplit(url)
    original_init = databases.Database.__init__

    def init(self, fixture_url, **options):
        scheme = urlsplit(str(fixture_url)).scheme
        options.update(min_size=1, max_size=1)
        original_init(self, test._replace(scheme=scheme).geturl(), **options)

    databases.Database.__init__ = init


async def probe(database):
    row = await database.fetch_one(PROBE)
    # By position: the backends' records iterate differently (asyncpg's over its keys).
    setting, user, invoices = row[0], row[1], row[2]
    return {"setting": setting, "user": user, "invoices": invoices}


async def job_then_probe(module, database_name="database"):
    database = getattr(module, database_name)
    await database.connect()
    try:
        return {"job": await module.count_invoices(1), "next": await probe(database)}
    finally:
        await database.disconnect()


async def proof_session(url):
    """no-session-tenant-setting: aiopg backend, the session setting stays for the next call; the good fixture's does not."""
    pointed_at(url)
    bad = load("python/no-session-tenant-setting/bad-databases.py", url)
    good = load("python/no-session-tenant-setting/good-databases.py", url)
    # The default (asyncpg) backend: asyncpg's release runs RESET ALL, so even the session form ends there.
    await good.default_backend.connect()
    try:
        default_backend = {"job": await good.totals(1), "next": await probe(good.default_backend)}
    finally:
        await good.default_backend.disconnect()
    return {"bad": await job_then_probe(bad), "good": await job_then_probe(good), "default_backend": default_backend}


async def proof_local(url):
    """no-local-setting-outside-transaction: outside a transaction each call is its own autocommit statement."""
    pointed_at(url)
    bad = load("python/no-local-setting-outside-transaction/bad-databases.py", url)
    good = load("python/no-local-setting-outside-transaction/good-databases.py", url)
    return {"bad": await job_then_probe(bad), "good": await job_then_probe(good)}


PROOFS = {"session": proof_session, "local": proof_local}


if __name__ == "__main__":
    run_async_proof(PROOFS, {"databases": databases.__version__})
