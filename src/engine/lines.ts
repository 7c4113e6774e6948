// Line positions moved to the model (src/model/lines.ts): the model's own queue facts need them, and the
// model must not import the engine. This name stays for the importers that still use it.
export { LineIndex, lineIndexOf } from '../model/lines.ts';
