// One BullMQ worker process of concurrency 1 whose every job is a no-op: the
// reference side of bench/groups_vs_bullmq.py, as ocrgw's `echo` children are
// its own side.  The flow's parent runs on the same queue, so that a worker
// that finishes a child may take the parent next, as BullMQ's own flows do.
//
//   node worker.mjs HOST PORT QUEUE
//
// Prints one line when its connection is ready; the bench waits for it.
import { Worker } from 'bullmq';

const [host, port, queue] = process.argv.slice(2);
if (!host || !port || !queue) {
  console.error('usage: node worker.mjs HOST PORT QUEUE');
  process.exit(2);
}

const worker = new Worker(queue, async () => null, {
  connection: { host, port: Number(port) },
  concurrency: 1,
});
worker.on('error', (err) => console.error(`bullmq worker error: ${err}`));
await worker.waitUntilReady();
console.log(`bullmq worker ready on ${queue}`);

process.on('SIGTERM', async () => {
  await worker.close();
  process.exit(0);
});
