// Django's mail API: what sends an e-mail over the configured backend (SMTP
// by default) when it is called. Read by the side-effect rule's Python front
// end: a send inside a transaction that locked rows goes out again on every
// retry after a rollback.

/** Functions of django.core.mail that send at the call. */
const SENDING_FUNCTIONS: ReadonlySet<string> = new Set(
  ['send_mail', 'send_mass_mail', 'mail_admins', 'mail_managers'].flatMap((name) => [`django.core.mail.${name}`]),
);

/** Message classes whose `send()` sends (`EmailMultiAlternatives(...).send()`). */
const MESSAGE_CLASSES = /^django\.core\.mail(\.message)?\.(EmailMessage|EmailMultiAlternatives)$/;

/** The backend connection `get_connection()` returns: its `send_messages(...)` sends. */
const CONNECTION_FACTORIES: ReadonlySet<string> = new Set(['django.core.mail.get_connection']);

/**
 * The Django mail call a call is, or undefined: `qualified` is the callee's
 * qualified name, `method` the method called, `madeBy` the qualified name of
 * the call that made the receiver (`msg = EmailMessage(...)`; `msg.send()`), asked only for a sending method.
 */
export function djangoMailSend(qualified: string | undefined, method: string | undefined, madeBy: () => string | undefined): string | undefined {
  if (qualified && SENDING_FUNCTIONS.has(qualified)) return qualified;
  if (method !== 'send' && method !== 'send_messages') return undefined;
  const maker = madeBy();
  if (!maker) return undefined;
  if (method === 'send' && MESSAGE_CLASSES.test(maker)) return `${maker}.send`;
  if (method === 'send_messages' && CONNECTION_FACTORIES.has(maker)) return `${maker}().send_messages`;
  return undefined;
}
