"""Loads fixture modules for the Python proofs: the proofs run the fixtures' own code.

A fixture reads its database from DATABASE_URL, which the proof sets to the
seeded test database (the worker role, subject to RLS) before importing it.
"""

import importlib.util
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


PROBE = "select current_setting('app.tenant', true), current_user::text, (select count(*) from invoices)"
