--[[
  record_webhook: records the answer to one delivery attempt in the job's
  events (operation webhook) and decides what follows.  Only the current
  attempt (the last claimed) decides; an older one that ran late is
  recorded as superseded and changes nothing else.

  The current attempt's answer frees its slot among its tenant's claims.

  Keys:
    job              the job's hash
    webhooks         the index of due webhooks, scored in ms
    events           the root's audit stream
    tenant_webhooks  the job's tenant's claimed webhooks (see claim_webhook)

  Args:
    job_id
    attempt          the attempt's number, from claim_webhook
    delivered        1 if the receiver answered 2xx
    response_status  the receiver's HTTP status, '' if it never answered
    error_code       why the attempt failed ('' if it did not)
    error            its message
    retry_ms         the wait before the next attempt, if there is one
    give_up_ms       attempts stop this long after the job's finished_at

  Reply:
    {OK, outcome, retry_at, lag_us}  recorded; outcome is a WEBHOOK value;
                             retry_at (ms) when retrying: the next attempt's
                             due time, never past the retry window's end, so
                             the last attempt falls on it; lag_us when
                             delivered: from the job's finished_at to now
                             (the delivery lag), -1 otherwise
    {NO_JOB}                 the job is gone; it leaves the index
]]
-- @include common

local f = redis.call('HMGET', K.job, F.id, F.parent_id, F.status, F.model, F.finished_at, F.webhook_attempts)
if not f[1] then
  redis.call('ZREM', K.webhooks, A.job_id)
  redis.call('ZREM', K.tenant_webhooks, A.job_id)
  return reply{code = REPLY.NO_JOB}
end
local now = now_us()
local now_ms = tonumber(ms_of(now))
local outcome, retry_at, lag_us = WEBHOOK.superseded, 0, -1
if tonumber(f[6] or '0') == A.attempt then
  redis.call('ZREM', K.tenant_webhooks, A.job_id)
  if A.delivered == 1 then
    outcome = WEBHOOK.delivered
    redis.call('ZREM', K.webhooks, A.job_id)
    local finished = tonumber(f[5] or '')
    if finished then lag_us = math.max(0, now - finished) end
  else
    local finished = tonumber(f[5] or '') or now
    local give_up_at = math.floor(finished / 1000) + A.give_up_ms
    if now_ms >= give_up_at then
      outcome = WEBHOOK.given_up
      redis.call('ZREM', K.webhooks, A.job_id)
    else
      outcome = WEBHOOK.retrying
      retry_at = math.min(now_ms + A.retry_ms, give_up_at)
      redis.call('ZADD', K.webhooks, retry_at, A.job_id)
    end
  end
end
redis.call('XADD', K.events, '*',
  E.operation, OPERATION.webhook,
  E.job_id, A.job_id,
  E.parent_job_id, f[2] or '',
  E.status, f[3] or '',
  E.model, f[4] or '',
  E.error_code, A.error_code,
  E.time, int(now),
  E.attempt, int(A.attempt),
  E.outcome, outcome,
  E.response_status, A.response_status,
  E.error, A.error,
  E.retry_at, retry_at > 0 and int(retry_at * 1000) or '')
return reply{code = REPLY.OK, outcome = outcome, retry_at = retry_at, lag_us = lag_us}
