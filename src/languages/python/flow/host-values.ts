// The values a walk's SQL is bound to, read as far as the code shows them: a literal, the clock
// (`datetime.now(timezone.utc) + LEASE`), a parameter of the function (with its default, or what the
// call the walk stands for passes, read in the caller), a constant imported from a project module or a
// class attribute. CallWalk builds on it.
import { BindingWalk } from './bindings.ts';
import { clockSeconds, type ClockReader } from './clock.ts';
import type { HostParam } from '../../../model/index.ts';
import { hostParam } from './params.ts';
import { passedClock, passedNumber, type PassedArgument } from './project-callers.ts';
import { isNow } from '../orm/writer.ts';
import { unwrap, type Node } from '../syntax.ts';

export abstract class HostValueWalk extends BindingWalk {
  /** The value a name stands for here: a local assignment the walk knows, else a constant of the file. */
  readonly nameValue = (n: Node): Node | undefined => this.file.localValue(n) ?? this.file.constants.get(this.text.slice(n.from, n.to));

  /** One bound value: a literal, a parameter of this function (its callers choose it), or unknown. */
  hostParam(node: Node | undefined): HostParam {
    const valueOf = this.nameValue;
    const clock = clockSeconds(node, this.clockReader());
    if (clock !== undefined) return { kind: 'clock', seconds: clock };
    const param = hostParam(node, this.text, (name) => this.params.has(name), valueOf);
    const expr = unwrap(node);
    // A parameter with a literal default (`def claim(minutes=LEASE_MINUTES)`): the callers may pass another, so it stays
    // theirs, with the default beside it.
    if (param.kind === 'caller-parameter') {
      // Walked in place of a call (maybeInline): the value that call passes, read where it is written, if it reads
      // as more than a parameter of no default there (`take(lease=DEFAULT_LEASE)` calling `claim(lease)`).
      const passed = this.givenArgs.get(param.name);
      const caller = this.info.parent;
      const outer = passed && caller instanceof HostValueWalk ? caller.hostParam(passed) : undefined;
      if (outer && outer.kind !== 'unknown' && !(outer.kind === 'caller-parameter' && outer.default === undefined)) return outer;
      const given = this.paramDefaults.get(param.name);
      const fallback = given ? this.literalOf(given) : undefined;
      return fallback ? { ...param, default: fallback.value } : param;
    }
    if (param.kind !== 'unknown' || !expr) return param;
    return this.literalOf(expr) ?? param;
  }

  /** The clock as this walk reads it; a parameter is what the call this walk stands for passes, read in the caller. */
  clockReader(): ClockReader {
    return {
      text: this.text,
      qualify: (n) => this.file.qualify(n),
      valueOf: this.nameValue,
      isParameter: (name) => this.params.has(name),
      passed: (name) => {
        const given = this.givenArgs.get(name);
        const caller = this.info.parent;
        return given && caller instanceof HostValueWalk ? clockSeconds(given, caller.clockReader()) : undefined;
      },
      // Walked on its own (no call it stands for): what the calls of the project pass, where every one agrees.
      projectClock: (name) => {
        const args = this.ownProjectArguments(name);
        return !!args && args.every((a) => passedClock(a, isNow));
      },
      projectNumber: (name) => {
        const values = (this.ownProjectArguments(name) ?? []).map((a) => passedNumber(a));
        return values.length > 0 && values.every((v) => v !== undefined && v === values[0]) ? values[0] : undefined;
      },
    };
  }

  private ownProjectArguments(name: string): PassedArgument[] | undefined {
    const def = this.info.def;
    return def && !this.info.inlinedAt && this.params.has(name) ? this.file.projectArguments(def, name) : undefined;
  }

  /**
   * A literal a name or member stands for beyond the function: a constant imported from a project module
   * (`from app.settings import LEASE_MINUTES`), a class attribute (`self.LEASE_MINUTES`, `Worker.LEASE_MINUTES`).
   */
  private literalOf(node: Node): (HostParam & { kind: 'literal' }) | undefined {
    const valueOf = this.nameValue;
    const expr = unwrap(node);
    if (!expr) return undefined;
    const direct = hostParam(expr, this.text, () => false, valueOf);
    if (direct.kind === 'literal') return direct;
    if (expr.name === 'VariableName' && !valueOf(expr)) {
      const name = this.text.slice(expr.from, expr.to);
      const imported = this.file.importedLiteral(name);
      if (imported?.kind === 'literal') return imported;
      // A default value in a method's parameters is evaluated in the class body: its names are the class's.
      const inParams = expr.parent?.name === 'ParamList';
      const inClass = inParams ? this.file.classConstant(name, expr) : undefined;
      const literal = inClass ? hostParam(inClass, this.text, () => false, valueOf) : undefined;
      return literal?.kind === 'literal' ? literal : undefined;
    }
    if (expr.name === 'MemberExpression') {
      const value = this.file.memberValue(expr);
      const member = value ? hostParam(value, this.text, () => false, valueOf) : undefined;
      return member?.kind === 'literal' ? member : undefined;
    }
    return undefined;
  }
}
