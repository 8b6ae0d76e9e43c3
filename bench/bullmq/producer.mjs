// The BullMQ side's client for bench/groups_vs_bullmq.py: adds G flows, each a
// parent with N no-op children, one `FlowProducer.add` after the other, and
// says when it started and which parents it made.
//
//   node producer.mjs HOST PORT QUEUE
//
// It stays up between rounds, so that its connection and Node's compiled code
// are warm for each, as the ocrgw side's client and gateway are.  It takes
// each round from the Redis list `bench:bullmq:rounds` (a JSON object:
// {"reply": KEY, "groups": G, "children": N}), builds the flows, then takes
// the time and adds them; once every parent's `completed` event has come
// (QueueEvents, a blocking XREAD; every 250 ms it also reads the parents'
// hashes, in case the trimmed events stream lost one), it RPUSHes to KEY a JSON object:
// {"started_ms": the epoch time before the first add, in fractional
// milliseconds, "parents": the parents' ids, "failed": ids of parents that
// failed}.  The bench reads each parent's own `finishedOn`, so that the lag
// of the event does not count.
import { FlowProducer, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';

const [host, port, queue] = process.argv.slice(2);
if (!host || !port || !queue) {
  console.error('usage: node producer.mjs HOST PORT QUEUE');
  process.exit(2);
}
const connection = { host, port: Number(port) };
const ROUNDS_KEY = 'bench:bullmq:rounds';
// How often the parents' hashes are read while their events are awaited.
const RECHECK_MS = 250;

const producer = new FlowProducer({ connection });
const events = new QueueEvents(queue, { connection });
const commands = new Redis(connection);

// Every parent's end, whenever it comes: a parent could end before the
// producer has looked for it.
const ended = new Map();
let wake = () => {};
events.on('completed', ({ jobId }) => {
  ended.set(jobId, 'completed');
  wake();
});
events.on('failed', ({ jobId }) => {
  ended.set(jobId, 'failed');
  wake();
});

await producer.waitUntilReady();
await events.waitUntilReady();
console.log(`bullmq producer ready on ${queue}`);

// The events stream is trimmed (to about 10,000 entries), and five flows of
// 500 write about that many: a reader that fell that far behind would never
// see a parent's end.  So the parents' own hashes are read too, now and then.
async function recheck(ids) {
  if (ids.length === 0) return;
  const replies = await commands
    .pipeline(ids.map((id) => ['hmget', `bull:${queue}:${id}`, 'finishedOn', 'failedReason']))
    .exec();
  replies.forEach(([err, [finishedOn, failedReason]], i) => {
    if (!err && finishedOn) ended.set(ids[i], failedReason ? 'failed' : 'completed');
  });
}

function flowsOf(groups, children) {
  return Array.from({ length: groups }, (_, g) => ({
    name: 'parent',
    queueName: queue,
    data: { group: g },
    children: Array.from({ length: children }, (_, i) => ({ name: 'child', queueName: queue, data: { i } })),
  }));
}

for (;;) {
  const [, text] = await commands.blpop(ROUNDS_KEY, 0);
  const round = JSON.parse(text);
  const flows = flowsOf(round.groups, round.children);
  const startedMs = performance.timeOrigin + performance.now();
  const parents = [];
  for (const flow of flows) {
    const node = await producer.add(flow);
    parents.push(node.job.id);
  }
  while (!parents.every((id) => ended.has(id))) {
    const woken = new Promise((resolve) => {
      wake = resolve;
    });
    await Promise.race([woken, new Promise((resolve) => setTimeout(resolve, RECHECK_MS))]);
    await recheck(parents.filter((id) => !ended.has(id)));
  }
  const failed = parents.filter((id) => ended.get(id) !== 'completed');
  for (const id of parents) ended.delete(id);
  await commands.rpush(round.reply, JSON.stringify({ started_ms: startedMs, parents, failed }));
}
