// Django's mail API as side effects: the module functions that send, a
// message's send() where the receiver was made by a message class (at the
// call or through the one value of a name), and nothing for look-alikes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { djangoMailSend } from '../../src/languages/python/drivers/django/mail.ts';
import { receiverMaker } from '../../src/languages/python/flow/side-effects.ts';
import { methodCall, parsePython, type Node } from '../../src/languages/python/syntax.ts';

test('send_mail and its siblings send; other functions of the module do not', () => {
  assert.equal(djangoMailSend('django.core.mail.send_mail', undefined, () => undefined), 'django.core.mail.send_mail');
  assert.equal(djangoMailSend('django.core.mail.mail_admins', undefined, () => undefined), 'django.core.mail.mail_admins');
  assert.equal(djangoMailSend('django.core.mail.get_connection', undefined, () => undefined), undefined);
});

test("a message's send() and a backend connection's send_messages() send; a send() on anything else does not", () => {
  assert.ok(djangoMailSend(undefined, 'send', () => 'django.core.mail.EmailMultiAlternatives'));
  assert.ok(djangoMailSend(undefined, 'send', () => 'django.core.mail.message.EmailMessage'));
  assert.ok(djangoMailSend(undefined, 'send_messages', () => 'django.core.mail.get_connection'));
  assert.equal(djangoMailSend(undefined, 'send', () => 'app.signals.Signal'), undefined);
  assert.equal(djangoMailSend(undefined, 'send', () => undefined), undefined);
  assert.equal(djangoMailSend(undefined, 'attach_alternative', () => 'django.core.mail.EmailMultiAlternatives'), undefined);
});

/** The maker receiverMaker reads for the method call `<receiver>.send(...)` in the source, qualifying names as written. */
function makerAt(lines: string[], receiver: string): string | undefined {
  const parsed = parsePython(lines.join('\n') + '\n');
  assert.ok(parsed.ok);
  const at = parsed.text.indexOf(`${receiver}.send(`);
  let node: Node | null = parsed.tree.topNode.resolveInner(at + receiver.length + 2, 1);
  while (node && node.name !== 'CallExpression') node = node.parent;
  const method = methodCall(node, parsed.text);
  assert.ok(method);
  return receiverMaker(method.object, parsed.text, (n) => parsed.text.slice(n.from, n.to));
}

test('the receiver made at the call, or by the one assignment of the name in its def', () => {
  assert.equal(makerAt(['def f():', '    m = EmailMessage("s", "b")', '    m.send()'], 'm'), 'EmailMessage');
  assert.equal(makerAt(['def f():', '    return EmailMessage("s", "b").send()'], 'EmailMessage("s", "b")'), 'EmailMessage');
});

test('a name bound twice, or handed in, has no known maker', () => {
  assert.equal(makerAt(['def f(flag):', '    m = EmailMessage("s", "b")', '    if flag:', '        m = other()', '    m.send()'], 'm'), undefined);
  assert.equal(makerAt(['def f(m):', '    m.send()'], 'm'), undefined);
});
