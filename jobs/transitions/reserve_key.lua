--[[
  reserve_key: takes, settles or frees a tenant's Idempotency-Key for a
  redrive, in the key's own slot (the bucket of (tenant, key), where a
  creation with the key keeps its record too), around the redrive itself,
  which runs in its group's bucket.  So a key holds across buckets: whichever
  group it is sent with, it is taken once.

  take: the record is written pending until the redrive is known to have
  run.  A record found pending may be of a redrive that never ran (its caller
  died between the steps), so the same request sent again runs the redrive,
  whose own mark in the group's bucket (redrive.lua) answers a replay if it
  did run.  settle: the redrive ran (or had run): no longer pending.  free:
  the redrive was refused (the group still running, nothing to send again):
  the pending record goes, so that the key is as unused, as when a refused
  redrive wrote nothing.  settle and free touch only the record of this
  request (its fingerprint).  A take records its token as the pending one,
  also over a pending record of the same request (it runs the redrive again
  itself), and free deletes only while its token is still the pending one:
  a refused attempt's free cannot drop the record of a later attempt that
  then redrove the group, which would free the key for another group.

  Keys:
    idempotency    the key's record (keys.idempotency)

  Args:
    action         take, settle or free
    parent_id      the group the redrive is for
    fingerprint    the request's, to tell a retried request from a key reused
    token          this attempt's own, new for each call of the redrive
    idempotency_ttl  how long the record is kept

  Reply:
    {OK}              take: taken now, pending (run the redrive); settle,
                      free: done
    {REPLAYED, pending}  take: taken before by the same request; pending 1
                      while its redrive is not known to have run
    {KEY_REUSED}      take: taken by a different request (another group's
                      redrive, a creation, the same group with other options)
    {NOTHING}         settle: the record is not this request's pending one;
                      free: nor is its pending token this attempt's
]]

local existing = redis.call('HMGET', K.idempotency, F.id, 'fingerprint', 'pending')
local mine = existing[1] and existing[2] == A.fingerprint
if A.action == 'take' then
  if existing[1] then
    if not mine then return reply{code = REPLY.KEY_REUSED} end
    local pending = 0
    if existing[3] then
      pending = 1
      redis.call('HSET', K.idempotency, 'pending', A.token)
    end
    return reply{code = REPLY.REPLAYED, pending = pending}
  end
  redis.call('HSET', K.idempotency, F.id, A.parent_id, 'fingerprint', A.fingerprint, 'pending', A.token)
  redis.call('EXPIRE', K.idempotency, A.idempotency_ttl)
  return reply{code = REPLY.OK}
end
if not (mine and existing[3]) then return reply{code = REPLY.NOTHING} end
-- A redrive that ran settles whoever took the key last; a refusal frees only its own take.
if A.action == 'free' and existing[3] ~= A.token then return reply{code = REPLY.NOTHING} end
if A.action == 'settle' then
  redis.call('HDEL', K.idempotency, 'pending')
else
  redis.call('DEL', K.idempotency)
end
return reply{code = REPLY.OK}
