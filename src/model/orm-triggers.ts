// Prefilter triggers for row writes that ORM code makes without writing SQL
// (the Python front end writes the SQL for them): SQLAlchemy's
// update(jobs).where(...) / delete(Job).where(...), Django's
// Job.objects.filter(...).update(status=...) and instance.save(), and the
// ORM locks select_for_update / with_for_update. Rules that read row writes
// add these so a file written with an ORM is parsed. No word boundaries: the
// prefilter's automaton has none, and a trigger may only over-approximate.

/** `update(jobs)` / `delete(Job)` / `insert(jobs)` builders, queryset `.update(field=...)` and Django's `.bulk_update(objs, fields)`. */
export const ORM_WRITE = /(?:update|delete|insert)\(\s*\w+(?:\.\w+)*\s*\)|\.update\(\s*\w+\s*=|\.bulk_update\(/i;
/** ORM row locks. */
export const ORM_LOCK = /(?:select|with)_for_update|skip_locked/i;
