// Calls to the outside world in TS/JS: what a rollback cannot take back, or a
// wait that keeps a transaction open. The front end asks for each call with
// the callee's dotted name (`fetch`, `axios.post`, `this.producer.send`).

/** Bare functions: fetch and its wrappers, promisified waits. */
const FUNCTIONS = new Set(['fetch', 'axios', 'got', 'ky', 'request', 'needle', 'superagent', 'ofetch', '$fetch', 'sleep', 'setTimeout', 'delay', 'wait']);

/** Objects whose every method goes over the network (`axios.post`, `https.request`, `sgMail.send`, `stripe.charges.create`). */
const OBJECTS = /^(axios|got|ky|http|https|http2|undici|superagent|needle|ofetch|sgMail|mailgun|postmark|twilio|resend|stripe)$/;

/** Method names that mean mail, SMS, brokers or chat whatever the receiver. */
const METHODS = new Set([
  'sendMail', // nodemailer
  'sendEmail', 'sendRawEmail', 'sendTemplatedEmail', // SES, Postmark
  'sendSms', 'sendSMS',
  'sendToQueue', // amqplib
  'publish', // amqplib channels, SNS, Redis, NATS
  'postMessage', // Slack
  'sendMessage', // SQS, Telegram
  'xadd', 'xAdd', 'lpush', 'lPush', 'rpush', 'rPush', 'lpushx', 'rpushx', 'spublish', 'sPublish', // Redis (ioredis, node-redis)
  'putObject', 'copyObject', // S3 (SDK v2)
]);

/** Methods that go out only on receivers named for what they are: `producer.send`, `s3.send`, `emailQueue.add`, `apiClient.post`. */
const BY_RECEIVER: { receiver: RegExp; methods: RegExp }[] = [
  { receiver: /producer|kafka/i, methods: /^(send|sendBatch|produce)$/ }, // kafkajs, node-rdkafka
  { receiver: /s3/i, methods: /^(send|upload|putObject|copyObject|deleteObject|deleteObjects)$/ }, // AWS SDK v3 `s3.send(new PutObjectCommand(...))`, v2 `s3.upload`
  { receiver: /(sqs|sns|ses|eventbridge|kinesis)/i, methods: /^send$/ }, // AWS SDK v3 clients
  { receiver: /queue$/i, methods: /^(add|addBulk)$/ }, // BullMQ: the job is in Redis before the transaction commits
];

/** Words of a receiver (camelCase and snake_case) that name an HTTP client: `apiClient`, `this.http`, `webhookClient`. */
const HTTP_WORDS = new Set(['http', 'https', 'api', 'rest', 'webhook', 'webhooks', 'axios', 'got', 'undici']);
const HTTP_VERBS = /^(get|post|put|patch|delete|head|request|fetch)$/;

function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_$]+/)
    .map((w) => w.toLowerCase())
    .filter(Boolean);
}

/** True when a call of `name` reaches the outside world. */
export function typescriptSideEffect(name: string): boolean {
  const parts = name.split('.');
  if (parts.length === 1) return FUNCTIONS.has(name);
  if (parts[0] === 'globalThis' || parts[0] === 'window') return FUNCTIONS.has(parts[parts.length - 1]);
  const method = parts[parts.length - 1];
  const receiver = parts[parts.length - 2];
  if (OBJECTS.test(parts[0]) || (parts[0] === 'this' && OBJECTS.test(parts[1] ?? ''))) return true;
  if (METHODS.has(method)) return true;
  if (BY_RECEIVER.some((r) => r.receiver.test(receiver) && r.methods.test(method))) return true;
  return HTTP_VERBS.test(method) && words(receiver).some((w) => HTTP_WORDS.has(w));
}
