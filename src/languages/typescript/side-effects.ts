// Calls to the outside world in TS/JS: what a rollback cannot take back, or a
// wait that keeps a transaction open. The front end asks for each call with
// the callee's dotted name (`fetch`, `axios.post`, `transporter.sendMail`).

/** Bare functions: fetch and its wrappers, promisified waits. */
const FUNCTIONS = new Set(['fetch', 'axios', 'got', 'ky', 'request', 'needle', 'sleep', 'setTimeout', 'delay', 'wait']);

/** Objects whose every method goes over the network (`axios.post`, `https.request`, `sgMail.send`). */
const OBJECTS = /^(axios|got|ky|http|https|http2|undici|superagent|needle|sgMail|mailgun|postmark|twilio)$/;

/** Method names that mean mail, SMS, brokers or chat whatever the receiver. */
const METHODS = new Set([
  'sendMail', // nodemailer
  'sendEmail', 'sendRawEmail', 'sendTemplatedEmail', // SES, Postmark
  'sendSms', 'sendSMS',
  'sendToQueue', // amqplib
  'publish', // amqplib channels, SNS, Redis, NATS
  'postMessage', // Slack
  'sendMessage', // SQS, Telegram
]);

/** True when a call of `name` reaches the outside world. */
export function typescriptSideEffect(name: string): boolean {
  const parts = name.split('.');
  if (parts.length === 1) return FUNCTIONS.has(name);
  if (parts[0] === 'globalThis' || parts[0] === 'window') return FUNCTIONS.has(parts[parts.length - 1]);
  return OBJECTS.test(parts[0]) || METHODS.has(parts[parts.length - 1]);
}
