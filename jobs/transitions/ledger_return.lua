--[[
  ledger_return: the second step of a return of quota from a bucket
  (jobs/tenant_quota.py): takes A.k off the bucket's grant in the tenant's
  ledger, if the ledger's epoch is still the one read before the bucket's
  step (quota_return).  A reconcile since then has read the bucket's quota
  afresh: the return is refused, and the ledger keeps the quota the bucket
  gave back until the next reconcile (the safe way).

  Keys:
    ledger         the tenant's ledger

  Args:
    field          the bucket's field in the ledger (b<i>)
    k              how much the bucket gave back
    epoch          the ledger's epoch, read before the bucket's step

  Reply:
    {OK}       taken off
    {NOTHING}  the epoch moved on: nothing written
]]
-- @include common

if tonumber(redis.call('HGET', K.ledger, 'epoch') or '0') ~= A.epoch then
  return reply{code = REPLY.NOTHING}
end
local left = tonumber(redis.call('HGET', K.ledger, A.field) or '0') - A.k
if left > 0 then
  redis.call('HSET', K.ledger, A.field, int(left))
else
  redis.call('HDEL', K.ledger, A.field)
end
redis.call('HINCRBY', K.ledger, 'seq', 1)
return reply{code = REPLY.OK}
