--[[
  release_webhook: with more than one bucket, gives back the slot a
  webhook's reservation (reserve_webhook) holds among its tenant's: when its
  claim in the bucket did not take it, or when its current attempt's answer
  was recorded (record_webhook).

  Keys:
    claims         the tenant's webhook claims across buckets, scored by deadline (ms)

  Args:
    job_id
    deadline       only the reservation until this deadline (ms); 0: whatever it holds

  Reply:
    {OK}       released
    {NOTHING}  it held none (it ran out, or another reservation holds it now)
]]

local score = redis.call('ZSCORE', K.claims, A.job_id)
if not score or (A.deadline ~= 0 and tonumber(score) ~= A.deadline) then return reply{code = REPLY.NOTHING} end
redis.call('ZREM', K.claims, A.job_id)
return reply{code = REPLY.OK}
