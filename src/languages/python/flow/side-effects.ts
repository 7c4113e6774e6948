// Calls to the outside world in Python: what a rollback cannot take back, or
// a wait that keeps a transaction open. The front end asks for each call it
// walks, with the callee qualified through the file's imports
// (`from httpx import post` -> `httpx.post`), the method name of a method
// call and its receiver as written (`self.producer`); unknown receivers are
// judged by method names that are unambiguous, or by what the receiver is
// named for.

/** Module functions and constructors (qualified names). */
const FUNCTIONS = new Set([
  // HTTP
  'requests.get', 'requests.post', 'requests.put', 'requests.patch', 'requests.delete', 'requests.head', 'requests.options', 'requests.request',
  'httpx.get', 'httpx.post', 'httpx.put', 'httpx.patch', 'httpx.delete', 'httpx.head', 'httpx.options', 'httpx.request', 'httpx.stream',
  'urllib.request.urlopen', 'urllib3.request', 'aiohttp.request',
  // mail, sockets, processes
  'smtplib.SMTP', 'smtplib.SMTP_SSL', 'aiosmtplib.send', 'socket.create_connection',
  'subprocess.run', 'subprocess.call', 'subprocess.check_call', 'subprocess.check_output', 'subprocess.Popen', 'os.system',
  // waits
  'time.sleep', 'asyncio.sleep',
]);

/** Method names that mean the outside world whatever the receiver: mail, brokers, task queues, cloud senders. */
const METHODS = new Set([
  'sendmail', 'send_message', // smtplib, aiosmtplib
  'basic_publish', // pika (RabbitMQ)
  'publish', // SNS, Redis, NATS, pika channels
  'produce', // confluent_kafka
  'send_and_wait', 'send_batch', // aiokafka
  'xadd', 'lpush', 'rpush', 'lpushx', 'rpushx', 'spublish', // Redis (redis-py)
  'upload_file', 'upload_fileobj', 'put_object', 'copy_object', // boto3 S3
  'send_email', 'send_raw_email', 'send_templated_email', // boto3 SES
  'send_sms', // SMS gateways
  'delay', 'apply_async', 'send_task', // Celery
]);

/** Methods that go out only on receivers named for what they are: `producer.send` (kafka-python), `s3.delete_object`. */
const BY_RECEIVER: { receiver: RegExp; methods: RegExp }[] = [
  { receiver: /producer|kafka/i, methods: /^send$/ },
  { receiver: /s3/i, methods: /^(delete_object|delete_objects|upload_part)$/ },
];

/** Words of a receiver that name an HTTP client: `http`, `api_client`, `self.webhook_client`, an httpx/aiohttp/requests `session` or `client`. */
const HTTP_WORDS = new Set(['http', 'https', 'httpx', 'api', 'rest', 'webhook', 'webhooks', 'requests', 'aiohttp']);
const HTTP_VERBS = /^(get|post|put|patch|delete|head|options|request|stream)$/;
/** `session` and `client` also name SQLAlchemy sessions and Redis clients: only the verbs those do not have. */
const SESSION_NAMES = /^(session|client|sess|http_session|async_client)$/;
const WRITE_VERBS = /^(post|put|patch)$/;

/** The callee to report when the call reaches the outside world, else undefined. */
export function pythonSideEffect(qualified: string | undefined, method: string | undefined, receiver?: string): string | undefined {
  if (qualified && FUNCTIONS.has(qualified)) return qualified;
  if (!method) return undefined;
  if (METHODS.has(method)) return qualified ?? method;
  const last = receiver?.slice(receiver.lastIndexOf('.') + 1);
  if (!last) return undefined;
  const callee = qualified ?? `${receiver}.${method}`;
  if (BY_RECEIVER.some((r) => r.receiver.test(last) && r.methods.test(method))) return callee;
  if (HTTP_VERBS.test(method) && last.toLowerCase().split('_').some((w) => HTTP_WORDS.has(w))) return callee;
  if (WRITE_VERBS.test(method) && SESSION_NAMES.test(last)) return callee;
  return undefined;
}
