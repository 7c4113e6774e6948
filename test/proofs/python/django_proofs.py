"""Proofs of what Django's connection handling does to session settings,
run on the fixture projects: requests go through the project's own
middleware and view with Django's request signals, as the handler sends
them; the second request sets no tenant and reports what it sees.

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


def main():
    name, url = sys.argv[1], sys.argv[2]
    # "command": the same jobs outside a request cycle (a management command's loop): no request signals.
    project = {"persistent": "py-django-persistent-bad", "per-request": "py-django-request-good", "command": "py-django-request-good"}[name]
    result = requests(project, url, [1, None], signals=name != "command")
    print(json.dumps({"python": sys.version.split()[0], "django": result["django"], "result": result["requests"]}))


if __name__ == "__main__":
    main()
