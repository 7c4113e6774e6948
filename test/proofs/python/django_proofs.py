"""Proofs of what Django's connection handling does to session settings,
run on the fixture projects: requests go through the project's own
middleware and view with Django's request signals, as the handler sends
them; the second request sets no tenant and reports what it sees. And the
optimistic claims of fixtures/python/require-claim-attempt-limit/
(`cas-bad`, `cas-good`), run as an app of their own.

    /usr/bin/python3 test/proofs/python/django_proofs.py <proof> <worker-url>
"""

import json
import os
import sys
from types import SimpleNamespace

from fixtures import ROOT


def requests(project, url, tenants, signals=True):
    """Runs one request per tenant (None: the middleware sets nothing) through the project's middleware and view."""
    os.environ["DATABASE_URL"] = url
    sys.path.insert(0, os.path.join(ROOT, "fixtures", "projects", project))
    os.environ["DJANGO_SETTINGS_MODULE"] = "mysite.settings"
    import django

    django.setup()
    from django.core.signals import request_finished, request_started
    from django.db import connection

    from tenants.middleware import TenantMiddleware
    from tenants.views import invoice_count

    seen = []
    for tenant in tenants:
        if signals:
            request_started.send(sender=None)
        try:
            if tenant is None:
                response = invoice_count(SimpleNamespace())
            else:
                response = TenantMiddleware(invoice_count)(SimpleNamespace(tenant_id=tenant))
            body = json.loads(response.content)
            with connection.cursor() as cursor:
                cursor.execute("select pg_backend_pid()")
                body["backend"] = cursor.fetchone()[0]
            seen.append(body)
        finally:
            if signals:
                request_finished.send(sender=None)
    return {"django": django.get_version(), "requests": seen}


CAS_FIXTURES = {
    "cas-bad": "python/require-claim-attempt-limit/bad-django-compare-and-set.py",
    "cas-good": "python/require-claim-attempt-limit/good-django-compare-and-set.py",
}


def compare_and_set(fixture, url, crashes=7):
    """A task whose worker dies every time: claimed with the fixture's claim_task, its lease run out, `crashes` times.

    The fixture is loaded as the models module of an app (`casapp`), its table made by Django's schema editor.
    """
    import tempfile
    import types
    from urllib.parse import urlparse

    import django
    from django.conf import settings

    parts = urlparse(url)
    settings.configure(
        SECRET_KEY="proof",
        USE_TZ=True,
        INSTALLED_APPS=["casapp"],
        DATABASES={"default": {"ENGINE": "django.db.backends.postgresql", "NAME": parts.path.lstrip("/"), "USER": parts.username, "PASSWORD": parts.password, "HOST": parts.hostname, "PORT": parts.port}},
    )
    package = types.ModuleType("casapp")
    package.__path__ = [tempfile.mkdtemp()]
    sys.modules["casapp"] = package
    models_path = os.path.join(package.__path__[0], "models.py")
    with open(models_path, "w") as out:
        out.write("from fixtures import load\nimport os\nfixture = load(os.environ['PGQ_CAS_FIXTURE'], os.environ['DATABASE_URL'], name='casapp.fixture')\n")
    os.environ["PGQ_CAS_FIXTURE"] = fixture
    os.environ["DATABASE_URL"] = url
    django.setup()
    from django.db import connection

    from casapp.models import fixture as module

    with connection.schema_editor() as editor:
        editor.create_model(module.Task)
    module.Task.objects.create(payload={"kind": "kills its worker"})
    claims = []
    for _ in range(crashes):
        claimed = module.claim_task()
        # The good claim returns (id, tries), the bad one the task: True, claimed with no count.
        claims.append(None if claimed is None else (claimed[1] if isinstance(claimed, tuple) else True))
        # The worker died: its lease runs out (moved back instead of waited for).
        module.Task.objects.update(leased_until=module.timezone.now() - module.timedelta(seconds=1))
    if hasattr(module, "bury_exhausted"):
        module.bury_exhausted()
    task = module.Task.objects.get()
    return {"django": django.get_version(), "claims": claims, "state": task.state, "tries": getattr(task, "tries", None)}


def main():
    name, url = sys.argv[1], sys.argv[2]
    if name in CAS_FIXTURES:
        result = compare_and_set(CAS_FIXTURES[name], url)
        print(json.dumps({"python": sys.version.split()[0], "django": result.pop("django"), "result": result}))
        return
    # "command": the same jobs outside a request cycle (a management command's loop): no request signals.
    project = {"persistent": "py-django-persistent-bad", "per-request": "py-django-request-good", "command": "py-django-request-good"}[name]
    result = requests(project, url, [1, None], signals=name != "command")
    print(json.dumps({"python": sys.version.split()[0], "django": result["django"], "result": result["requests"]}))


if __name__ == "__main__":
    main()
