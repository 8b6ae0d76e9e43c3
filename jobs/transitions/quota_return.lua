--[[
  quota_return: the first step of a return of the tenant's quota from a
  bucket (jobs/tenant_quota.py): gives back up to A.k of the bucket's
  quota, no more than its children in flight leave unused (so the quota
  never falls below them), and sets the bucket's ceiling: its releases keep
  the tenant's children here below it, so what is in use above it is given
  back as it frees, at the next return.  The second step (ledger_return)
  takes what this gave back off the ledger.

  Keys:
    quota          the tenant's quota in the bucket
    in_flight      the tenant's in-flight count in the bucket

  Args:
    k              how much to give back at most
    ceiling        the bucket's new ceiling (< 0: none)

  Reply:
    {OK, returned}  returned: 0 to k, taken off the bucket's quota
]]
-- @include common

local quota = tonumber(redis.call('HGET', K.quota, 'quota') or '0')
local in_flight = tonumber(redis.call('GET', K.in_flight) or '0')
local returned = math.max(0, math.min(A.k, quota - in_flight))
if returned > 0 then redis.call('HSET', K.quota, 'quota', int(quota - returned)) end
if A.ceiling >= 0 then
  redis.call('HSET', K.quota, 'ceiling', int(A.ceiling))
else
  redis.call('HDEL', K.quota, 'ceiling')
end
return reply{code = REPLY.OK, returned = returned}
