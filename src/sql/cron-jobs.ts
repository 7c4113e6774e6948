// pg_cron's `select cron.schedule('requeue-stale', '* * * * *', $$ update jobs
// set status = 'queued' where ... $$)`: the command is SQL that runs every time
// the schedule fires, in a transaction of its own, as a SQL function's body
// runs where it is called. A queue's reaper, its dead sweep or its claim often
// lives only there. This finds the command of such a call, to be read as the
// body of a routine named after the job.
import type { Node } from './extract.ts';
import { functionName } from './nodes.ts';

export interface CronCommand {
  /** The job's name, or the schedule where the call names none. */
  name: string;
  command: string;
  /** Byte offset of the command's literal in the parsed text. */
  location: number;
}

/** The command of a top-level `SELECT cron.schedule(...)` (or `cron.schedule_in_database`) given as a string constant. */
export function cronCommandOf(stmt: Node): CronCommand | undefined {
  const select = stmt?.SelectStmt;
  if (!select || select.fromClause) return undefined;
  for (const target of (select.targetList ?? []) as Node[]) {
    const call = target?.ResTarget?.val?.FuncCall;
    if (!call) continue;
    const name = functionName(call);
    const args = (call.args ?? []) as Node[];
    // cron.schedule(schedule, command), cron.schedule(job_name, schedule, command), cron.schedule_in_database(job_name, schedule, command, database, ...)
    const parts = (call.funcname ?? []) as Node[];
    if (parts.length !== 2 || String(parts[0]?.String?.sval ?? '').toLowerCase() !== 'cron' || (name !== 'schedule' && name !== 'schedule_in_database')) continue;
    const commandArg = args.length === 2 && name === 'schedule' ? args[1] : args[2];
    const command = commandArg?.A_Const?.sval?.sval;
    if (typeof command !== 'string' || typeof commandArg.A_Const.location !== 'number') continue;
    const label = args[0]?.A_Const?.sval?.sval;
    return { name: typeof label === 'string' ? label : 'unnamed', command, location: commandArg.A_Const.location };
  }
  return undefined;
}
