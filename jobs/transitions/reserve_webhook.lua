--[[
  reserve_webhook: with more than one bucket, the first step of a webhook's
  claim (jobs/webhooks.py): takes one of its tenant's
  OCRGW_WEBHOOK_TENANT_CONCURRENCY slots, in the tenant's own slot, until
  the claim's deadline.  The second step (claim_webhook in the job's bucket)
  claims it with that same deadline; if it does not, release_webhook gives
  the slot back.  A reservation whose second step never ran (a crash) holds
  its slot until its deadline, exactly as long as a claim would have.

  Keys:
    claims         the tenant's webhook claims across buckets, scored by deadline (ms)

  Args:
    job_id
    claim_ms       how long the claim holds
    share          how many claims the tenant may hold at once

  Reply:
    {OK, deadline, fresh}  reserved until <deadline> (ms): the claim's deadline;
                   fresh 1 if it takes a new slot, 0 if the job held one already
                   (its webhook is due again while a claim is live, as after a
                   redrive: the new claim supersedes the old one, and its slot
                   is held until the later deadline; as claim_webhook does with
                   one bucket, such a claim is not held back)
    {NOTHING}      the tenant's share is full
]]
-- @include common

local now_ms = tonumber(ms_of(now_us()))
-- Claims that ran out hold no slot any more.
redis.call('ZREMRANGEBYSCORE', K.claims, '-inf', now_ms)
local held = redis.call('ZSCORE', K.claims, A.job_id)
if not held and redis.call('ZCARD', K.claims) >= A.share then return reply{code = REPLY.NOTHING} end
local deadline = now_ms + A.claim_ms
-- A place held already keeps the later of its deadlines.
if not held or tonumber(held) < deadline then redis.call('ZADD', K.claims, deadline, A.job_id) end
-- The key goes when its latest claim runs out: a tenant whose webhooks stop coming leaves nothing behind.
local latest = redis.call('ZRANGE', K.claims, -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', K.claims, latest[2])
return reply{code = REPLY.OK, deadline = deadline, fresh = held and 0 or 1}
