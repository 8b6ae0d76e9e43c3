--[[
  ledger_open: the first step of a reconcile of the tenant's ledger with
  its buckets (jobs/tenant_quota.py): moves the ledger to a new epoch,
  which the reconcile then fences each bucket with (quota_fence) as it
  reads the bucket's quota; a grant of an older epoch is refused by a
  fenced bucket, a return of an older one by the ledger.

  Keys:
    ledger         the tenant's ledger

  Args:

  Reply:
    {OK, epoch, seq}  the new epoch, and how many grants and returns the ledger has seen (ledger_settle)
]]

local epoch = redis.call('HINCRBY', K.ledger, 'epoch', 1)
return reply{code = REPLY.OK, epoch = epoch, seq = tonumber(redis.call('HGET', K.ledger, 'seq') or '0')}
