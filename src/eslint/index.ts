// `import pgq from 'pgq-audit/eslint'`: the plugin (plugin.ts) once the SQL
// parser is loaded, so even Linter#verify called right after the import finds
// it ready. require('pgq-audit/eslint') loads plugin.ts itself.
import { loadSqlParser } from '../sql/index.ts';
import { plugin } from './plugin.ts';

await loadSqlParser();

export default plugin;
export { plugin };
