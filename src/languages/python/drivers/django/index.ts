// Django: the thread's connection per alias (django.db.connection,
// connections["alias"]), in autocommit unless ATOMIC_REQUESTS;
// transaction.atomic() blocks and decorators; connection_created signal
// handlers as configure callbacks; cursors run SQL with %s placeholders and
// nothing is prepared; the ORM's querysets and instance save()/delete() as
// the SQL they send.
import { defName, parameters } from '../../flow/defs.ts';
import { executed, initialFlow } from '../../flow/scopes.ts';
import type { FileApi } from '../../flow/types.ts';
import { isOuterCall } from '../../orm/writer.ts';
import { djangoMailSend } from './mail.ts';
import { djangoStatement, djangoValue, isLazyLockingQueryset } from './orm-sql.ts';
import { callParts, keyword, methodCall, positional, span, unwrap, type Node } from '../../syntax.ts';
import type { PythonDriver } from '../../flow/driver-api.ts';
import { DjangoContext } from './connections.ts';

const CURSOR_METHODS = new Set(['execute', 'executemany']);
/** A model's manager: `Job.objects`, `cls._default_manager`. */
const MANAGER = /\.(objects|_default_manager|_base_manager)$/;

const contextOf = (file: FileApi) => file.driverState('django', () => new DjangoContext(file));

export const django: PythonDriver = {
  name: 'django',
  sideEffect: djangoMailSend,
  modules: ['django'],
  unlessAlso: ['psycopg', 'psycopg2'],
  sqlMethods: { connection: CURSOR_METHODS, cursor: CURSOR_METHODS },
  runsSqlOnConnection: () => false,
  // The connection's own helpers (connection.ops.quote_name(...)) compose SQL: not the job's work.
  notWork: ['django.db.models', 'django.db.connection', 'django.db.connections', 'django.utils.timezone', 'F', 'Q'],
  // settings.X is the deployment's configuration: the same for every request (a schema it names is no tenant's).
  deploymentSettings: ['django.conf.settings'],
  // A migration's migrations.RunSQL("..."): its SQL (policies, functions, settings) is the project's own, run by migrate;
  // also its reverse_sql (run when the migration is rolled back) and the list form, ["...", ("... %s", [params])].
  sqlFunctions: ['django.db.migrations.RunSQL', 'django.db.migrations.operations.RunSQL'].map((path) => ({ path, cursorArg: -1, sqlArg: 0, sqlKeyword: 'sql', ownTransaction: true, moreSqlKeywords: ['reverse_sql'], sqlLists: true })),
  orm: {
    claims: (file) => file.imports.modules.has('django'),
    readInstance(walk, expr) {
      const built = djangoStatement(expr, walk.ormContext());
      return built?.returnsInstance ? { built, conn: contextOf(walk.file).connectionFor(walk, built.using) } : undefined;
    },
    handedInstance: (walk) => ({ conn: contextOf(walk.file).connectionFor(walk, undefined) }),
    writesAtSave: true,
    // Value("dead") and Case(When(...), default=...) inside an update.
    subquery: djangoValue,
    lazyQuery: (walk, value) => walk.file.imports.modules.has('django') && isLazyLockingQueryset(value, walk.text),
    // Job.objects.filter(...): inner steps of a chain whose last call is written whole.
    chain: (walk, _node, root, _first, outer) =>
      !outer && walk.file.imports.modules.has('django') && root.name === 'MemberExpression' && MANAGER.test(walk.text.slice(root.from, root.to))
        ? 'step'
        : undefined,
    // Job.objects.select_for_update(skip_locked=True).filter(...).first(), job.save(), job.delete().
    call(walk, node) {
      if (!walk.file.imports.modules.has('django') || !isOuterCall(node)) return false;
      // Job.objects.raw("delete ... for update skip locked ... returning *", params): its text, on the connection.
      const raw = methodCall(node, walk.text);
      if (raw?.method === 'raw' && MANAGER.test(walk.text.slice(raw.object.from, raw.object.to))) {
        const conn = contextOf(walk.file).connectionFor(walk);
        const statements = walk.sqlSite(positional(raw.call.args, 0) ?? keyword(raw.call.args, 'raw_query'), conn, raw.call.args, 'execute');
        walk.afterStatements(conn, statements, span(node));
        return true;
      }
      const built = djangoStatement(node, walk.ormContext());
      if (!built) return false;
      const conn = contextOf(walk.file).connectionFor(walk, built.using);
      const statements = walk.builtSite(built, conn);
      if (statements.length === 0) executed(conn, span(node));
      return true;
    },
  },
  forFile(file) {
    if (!file.imports.modules.has('django')) return undefined;
    const context = contextOf(file);
    return {
      // connection_created handlers: configure callbacks of the default connection, walked with the connection they get.
      walkCallbacks() {
        for (const def of context.connectionCreatedHandlers((expr, at) => file.resolveDef(expr, at))) {
          const config = context.configFor('default', def);
          const name = defName(def, file.text);
          const at = def.getChild('VariableName') ?? def;
          config.callbacks.push({ role: 'configure', name: `${name} (connection_created)`, span: span(at), endsOutsideTransaction: 'unknown', resolved: true });
          const conn = file.newConnection({
            driver: 'django',
            use: { kind: 'pooled-client', configId: config.id },
            origin: 'callback',
            callback: { configId: config.id, role: 'configure' },
            flow: initialFlow(config.autocommit),
          });
          // handler(sender, connection, **kwargs)
          const index = parameters(def, file.text).filter((p) => p.kind === 'normal').findIndex((p) => p.name === 'connection');
          file.walkCallback(def, conn, index >= 0 ? index : 1, name);
        }
        // migrations.RunPython(forwards, backwards): each runs with (apps, schema_editor), whose execute()
        // sends SQL on migrate's own connection, in the migration's transaction.
        for (const def of runPythonDefs(file)) {
          const conn = file.newConnection({ driver: 'unknown', use: { kind: 'dedicated' }, origin: 'connect', flow: initialFlow(false) });
          file.walkCallback(def, conn, 1, defName(def, file.text));
        }
      },
      finish: () => context.finish(),
      connectionOf: (expr, walk) => context.connectionOf(expr, walk),
      threadTransactions: (walk) => context.atomicDefConnection(walk),
      transactionBlock(expr, walk) {
        const conn = context.atomicOf(expr, walk);
        return conn ? { conn, form: '`with transaction.atomic()`' } : undefined;
      },
    };
  },
};


const RUN_PYTHON = new Set(['django.db.migrations.RunPython', 'django.db.migrations.operations.RunPython']);

/** The defs a migration's RunPython operations name (code and reverse_code). */
function runPythonDefs(file: FileApi): Node[] {
  const defs: Node[] = [];
  file.tree.topNode.cursor().iterate((ref) => {
    if (ref.name !== 'CallExpression') return;
    const call = callParts(ref.node, file.text);
    if (!call || !RUN_PYTHON.has(file.qualify(call.callee) ?? '')) return;
    for (const arg of [positional(call.args, 0) ?? keyword(call.args, 'code'), positional(call.args, 1) ?? keyword(call.args, 'reverse_code')]) {
      const expr = unwrap(arg);
      const def = expr ? file.resolveDef(expr, ref.node) : undefined;
      if (def?.name === 'FunctionDefinition' && !defs.includes(def)) defs.push(def);
    }
  });
  return defs;
}
