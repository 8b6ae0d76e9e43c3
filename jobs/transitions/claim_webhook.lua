--[[
  claim_webhook: takes a due webhook for one delivery attempt.  Its score in
  the webhooks index moves past the claim window, so another sweep finds it
  not due and cannot send it a second time meanwhile; if the attempt's
  answer is never recorded (its deliverer died), the window runs out and the
  next sweep claims it again, as a new attempt.

  A tenant holds at most tenant_cap claims at once (those whose answer is
  not recorded and whose window has not run out): past it, the webhook
  stays unclaimed and unattempted, due again defer_ms later, so that the
  tenant's others, and every other tenant's, are looked at first.

  With more than one bucket the tenant's share is counted in its own slot
  instead (reserve_webhook, the claim's first step): reserved is then the
  deadline it reserved, which the claim takes, and the bucket counts
  nothing; or -1, the share is full, and the webhook is held back as above.

  Keys:
    job              the job's hash (a single job, a parent or a child)
    webhooks         the index of terminal jobs whose webhook is due, scored in ms
    tenant_webhooks  the job's tenant's claimed webhooks, scored by when each claim runs out (ms);
                     it expires when the latest of them runs out

  Args:
    job_id
    claim_ms       how long the claim holds
    tenant_cap     how many claims the tenant may hold at once
    defer_ms       how much later a webhook the cap holds back is due again
    reserved       0: count the tenant's claims here (one bucket); > 0: the deadline (ms) the
                   tenant's slot reserved (more buckets); -1: its share is full there

  Reply:
    {OK, attempt}  deliver it now as attempt <attempt> (the job's webhook_attempts)
    {NOTHING}      not due (claimed meanwhile), held back by its tenant's cap,
                   or no longer wanted: the job is gone, has no callback_url,
                   or is not terminal (a redriven parent; it is due again when
                   it ends again), and leaves the index
]]
-- @include common

local now_ms = tonumber(ms_of(now_us()))
local due = redis.call('ZSCORE', K.webhooks, A.job_id)
if not due or tonumber(due) > now_ms then return reply{code = REPLY.NOTHING} end
local f = redis.call('HMGET', K.job, F.status, F.callback_url)
if not f[1] or not TERMINAL[f[1]] or not f[2] or f[2] == '' then
  redis.call('ZREM', K.webhooks, A.job_id)
  return reply{code = REPLY.NOTHING}
end
if A.reserved < 0 then
  redis.call('ZADD', K.webhooks, now_ms + A.defer_ms, A.job_id)
  return reply{code = REPLY.NOTHING}
end
if A.reserved > 0 then
  local attempt = redis.call('HINCRBY', K.job, F.webhook_attempts, 1)
  redis.call('ZADD', K.webhooks, A.reserved, A.job_id)
  return reply{code = REPLY.OK, attempt = attempt}
end
-- Claims whose deliverer never answered ran out: they hold no slot any more.
redis.call('ZREMRANGEBYSCORE', K.tenant_webhooks, '-inf', now_ms)
if not redis.call('ZSCORE', K.tenant_webhooks, A.job_id)
    and redis.call('ZCARD', K.tenant_webhooks) >= A.tenant_cap then
  redis.call('ZADD', K.webhooks, now_ms + A.defer_ms, A.job_id)
  return reply{code = REPLY.NOTHING}
end
local attempt = redis.call('HINCRBY', K.job, F.webhook_attempts, 1)
redis.call('ZADD', K.webhooks, now_ms + A.claim_ms, A.job_id)
redis.call('ZADD', K.tenant_webhooks, now_ms + A.claim_ms, A.job_id)
-- The key goes when its latest claim runs out: a tenant whose webhooks stop coming leaves nothing behind.
local latest = redis.call('ZRANGE', K.tenant_webhooks, -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', K.tenant_webhooks, latest[2])
return reply{code = REPLY.OK, attempt = attempt}
