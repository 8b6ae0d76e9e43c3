--[[
  claim_webhook: takes a due webhook for one delivery attempt.  Its score in
  the webhooks index moves past the claim window, so another sweep finds it
  not due and cannot send it a second time meanwhile; if the attempt's
  answer is never recorded (its deliverer died), the window runs out and the
  next sweep claims it again, as a new attempt.

  Keys:
    job            the job's hash (a single job, a parent or a child)
    webhooks       the index of terminal jobs whose webhook is due, scored in ms

  Args:
    job_id
    claim_ms       how long the claim holds

  Reply:
    {OK, attempt}  deliver it now as attempt <attempt> (the job's webhook_attempts)
    {NOTHING}      not due (claimed meanwhile), or no longer wanted: the job is
                   gone, has no callback_url, or is not terminal (a redriven
                   parent; it is due again when it ends again), and leaves the index
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
local attempt = redis.call('HINCRBY', K.job, F.webhook_attempts, 1)
redis.call('ZADD', K.webhooks, now_ms + A.claim_ms, A.job_id)
return reply{code = REPLY.OK, attempt = attempt}
