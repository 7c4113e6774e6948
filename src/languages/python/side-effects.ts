// Calls to the outside world in Python: what a rollback cannot take back, or
// a wait that keeps a transaction open. The front end asks for each call it
// walks, with the callee qualified through the file's imports
// (`from httpx import post` -> `httpx.post`) and the method name of a method
// call; unknown receivers are judged by method names that are unambiguous.

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
  'send_email', 'send_raw_email', 'send_templated_email', // boto3 SES
  'send_sms', // SMS gateways
  'delay', 'apply_async', 'send_task', // Celery
]);

/** The callee to report when the call reaches the outside world, else undefined. */
export function pythonSideEffect(qualified: string | undefined, method: string | undefined): string | undefined {
  if (qualified && FUNCTIONS.has(qualified)) return qualified;
  if (method && METHODS.has(method)) return qualified ?? method;
  return undefined;
}
