--[[
  ledger_settle: the last step of a reconcile (jobs/tenant_quota.py): sets
  the ledger's grants to the buckets' quotas the reconcile read, if
  nothing moved in the ledger since ledger_open (same epoch, no grant or
  return since: either could be one the reads missed), and moves the
  epoch on once more, so that a return which read the reconcile's epoch
  before its bucket's step (which the reads may have seen) is refused.

  Keys:
    ledger         the tenant's ledger

  Args:
    epoch          ledger_open's
    seq            ledger_open's
    grants         {b<i>: quota} as read from each bucket (JSON), the buckets with none left out

  Reply:
    {OK}       settled
    {NOTHING}  the ledger moved meanwhile: nothing written (the next reconcile tries again)
]]
-- @include common

local f = redis.call('HMGET', K.ledger, 'epoch', 'seq')
if tonumber(f[1] or '0') ~= A.epoch or tonumber(f[2] or '0') ~= A.seq then
  return reply{code = REPLY.NOTHING}
end
local all = redis.call('HKEYS', K.ledger)
for _, field in ipairs(all) do
  if string.sub(field, 1, 1) == 'b' then redis.call('HDEL', K.ledger, field) end
end
for field, quota in pairs(A.grants) do
  if tonumber(quota) > 0 then redis.call('HSET', K.ledger, field, int(tonumber(quota))) end
end
redis.call('HINCRBY', K.ledger, 'epoch', 1)
return reply{code = REPLY.OK}
