--[[
  quota_grant: the second step of a grant of the tenant's quota to a
  bucket (jobs/tenant_quota.py): adds what the ledger granted (ledger_grant)
  to the bucket's quota, unless a reconcile fenced the bucket with an epoch
  later than the grant's (it read the quota without this grant and set the
  ledger to it: the grant is void).  The bucket's releases may use the new
  quota at once (no ceiling any more); the first of the tenant's groups
  waiting here goes on the due index now, for the sweep's release.

  Keys:
    quota          the tenant's quota in the bucket
    waiting        the tenant's waiting line in the bucket
    due            the bucket's due index

  Args:
    k              what the ledger granted
    epoch          the ledger's epoch when it granted

  Reply:
    {OK, quota}  added: the bucket's quota now
    {NOTHING}    fenced by a later epoch: nothing written
]]
-- @include common

if tonumber(redis.call('HGET', K.quota, 'fence') or '0') > A.epoch then return reply{code = REPLY.NOTHING} end
local quota = redis.call('HINCRBY', K.quota, 'quota', A.k)
redis.call('HDEL', K.quota, 'ceiling')
local head = redis.call('ZRANGE', K.waiting, 0, 0)[1]
if head then redis.call('ZADD', K.due, ms_of(now_us()), head) end
return reply{code = REPLY.OK, quota = quota}
