-- Usage metering (jobs/usage.py says what is counted and why), written in
-- the step that ends an attempt, so that an attempt or a job is counted
-- exactly when it ends, once: a repeated call writes nothing, its
-- precondition refusing it first.
--
-- usage_attempt_ended: an attempt's engine seconds (µs from its started_at
--   to `now`, the run its interval records, whatever ended it) and, with
--   `units` (a completed job's: ocr_pages, text_layer_pages, input_bytes),
--   the job's pages, bytes and itself.  They go on the tenant's record of
--   the day (usage_key_of, in this bucket: `<hour>|<model>|<unit>` ->
--   amount, by the hour of `now`, UTC), kept until `keep_s` after that day
--   ends (set as each field is first written); on K.parent, the root's
--   sums (a single job's own); and a completed child's units on its own
--   hash.  Reads K.parent.
-- @needs common

local USAGE_UNITS = {UNIT.ocr_pages, UNIT.text_layer_pages, UNIT.input_bytes, UNIT.engine_us, UNIT.jobs}

-- started_at: the attempt's, when already read (nil: read here); units: nil unless the job completed.
local function usage_attempt_ended(job_key, job_id, kind, model, started_at, now, keep_s, units)
  if started_at == nil then started_at = redis.call('HGET', job_key, F.started_at) end
  local amounts = {[UNIT.engine_us] = math.max(0, now - (tonumber(started_at) or now))}
  if units then
    local own = {}
    for _, unit in ipairs({UNIT.ocr_pages, UNIT.text_layer_pages, UNIT.input_bytes}) do
      local amount = math.max(0, math.floor(tonumber(units[unit]) or 0))
      amounts[unit] = amount
      own[#own + 1] = unit
      own[#own + 1] = int(amount)
    end
    amounts[UNIT.jobs] = 1
    if kind == KIND.child then redis.call('HSET', job_key, unpack(own)) end
  end
  local seconds = math.floor(now / 1000000)
  local day = math.floor(seconds / 86400)
  local hour = string.format('%02d', math.floor((seconds % 86400) / 3600))
  local record = usage_key_of(tenant_tag_of(job_id), int(day))
  -- The record's expiry is set as a field is first written (a field's first amount is its total): a
  -- record whose fields all exist already has its expiry, the same one (it depends on its day alone).
  local new_field = false
  for _, unit in ipairs(USAGE_UNITS) do
    local amount = amounts[unit]
    if amount and amount > 0 then
      local total = redis.call('HINCRBY', record, hour .. '|' .. (model or '') .. '|' .. unit, int(amount))
      if total == amount then new_field = true end
      if unit ~= UNIT.jobs then redis.call('HINCRBY', K.parent, unit, int(amount)) end
    end
  end
  if new_field then redis.call('EXPIREAT', record, int((day + 1) * 86400 + keep_s)) end
end
