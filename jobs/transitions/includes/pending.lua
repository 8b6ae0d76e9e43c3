-- What one transition writes, gathered and written once at its end by
-- write_pending(), which every script that includes this calls before it
-- answers.  A child's step touches the same few things again and again: its
-- own hash, its parent's counts, the next child's hash as it is released and
-- then claimed in the same step, its tenant's in-flight count moved down by
-- the child that ends and up by the one released.  Gathered, each hash costs
-- one read and one HSET, a tenant's count one INCRBY (none when it comes back
-- where it was), and a child released and claimed in the same step never
-- enters the queued indexes at all.
--
-- read_fields(key, names): reads the fields of a job's hash that the step
--   has not read yet, in one HMGET; a caller names at once what it is about
--   to read.  field_of reads a field it was not given the same way, alone.
--   Read and change a job's hash through these, field_of, set_fields and
--   add_to_field only (a direct HGET would miss what is not written yet).
-- in_flight_change / in_flight_of: a tenant's in-flight count.
-- queue_released: a released child's entry in its parent's queued set and
--   in the queued index, written at the end unless unqueue_released takes
--   it back first (the child is claimed in the same step).
-- Keys come from the callers: this reads no key of its own.
-- @needs common

local HASHES = {}
local IN_FLIGHT_CHANGES = {}
local RELEASED = {}
local RELEASED_ORDER = {}
local released_pending = 0

-- A value a field had before the step that the step never read: written whatever it is now.
local UNREAD = {}

local function job_hash(key)
  local h = HASHES[key]
  if not h then
    -- v: the values (nil: absent); known: the fields read or set;
    -- was: the values as read, of the fields changed since
    h = {v = {}, known = {}, was = {}, changed = {}}
    HASHES[key] = h
  end
  return h
end

local function read_fields(key, names)
  local h = job_hash(key)
  local unread = {}
  for _, name in ipairs(names) do
    if not h.known[name] then unread[#unread + 1] = name end
  end
  if #unread > 0 then
    local values = redis.call('HMGET', key, unpack(unread))
    for i, name in ipairs(unread) do
      h.known[name] = true
      if values[i] then h.v[name] = values[i] end
    end
  end
end

-- What a child's step reads off its parent (its counts, rules, owner and
-- status), read at the parent's first use in one HMGET.
local PARENT_FIELDS = {F.tenant, F.key_id, F.status, F.total, F.model, F.max_parallel, F.cancel_requested,
  F.tolerated_failures, F.fail_fast, F.started_at, F.id, F.created_at, count_field(STATUS.held),
  count_field(STATUS.queued), count_field(STATUS.processing), count_field(STATUS.completed),
  count_field(STATUS.failed), count_field(STATUS.cancelled)}

local function read_parent(key)
  read_fields(key, PARENT_FIELDS)
end

-- A field's value as a string, or nil when the hash does not have it.
local function field_of(key, field)
  local h = job_hash(key)
  if not h.known[field] then read_fields(key, {field}) end
  return h.v[field]
end

local function as_value(v)
  if type(v) == 'number' and v == math.floor(v) then return int(v) end
  return tostring(v)
end

local function set_fields(key, ...)
  local h = job_hash(key)
  local pairs_ = {...}
  for i = 1, #pairs_, 2 do
    local field = pairs_[i]
    if not h.changed[field] then
      h.changed[field] = true
      if h.known[field] then h.was[field] = h.v[field] else h.was[field] = UNREAD end
    end
    h.known[field] = true
    h.v[field] = as_value(pairs_[i + 1])
  end
end

-- Returns the field's new value, a number.
local function add_to_field(key, field, n)
  local value = (tonumber(field_of(key, field)) or 0) + n
  set_fields(key, field, value)
  return value
end

local function in_flight_change(in_flight_key, n)
  IN_FLIGHT_CHANGES[in_flight_key] = (IN_FLIGHT_CHANGES[in_flight_key] or 0) + n
end

local function in_flight_of(in_flight_key)
  return tonumber(redis.call('GET', in_flight_key) or '0') + (IN_FLIGHT_CHANGES[in_flight_key] or 0)
end

local function queue_released(queued_key, prefix, child_id, index, publish_by)
  RELEASED[child_id] = {queued_key = queued_key, prefix = prefix, index = index, publish_by = publish_by}
  RELEASED_ORDER[#RELEASED_ORDER + 1] = child_id
  released_pending = released_pending + 1
end

local function released_now(child_id)
  return RELEASED[child_id] ~= nil
end

-- True when the child was released in this step (and is now no longer to be queued).
local function unqueue_released(child_id)
  if not RELEASED[child_id] then return false end
  RELEASED[child_id] = nil
  released_pending = released_pending - 1
  return true
end

-- How many jobs the queued index holds, the ones released in this step included.
local function queued_total(queued_key)
  return redis.call('ZCARD', queued_key) + released_pending
end

local function write_pending()
  for key, h in pairs(HASHES) do
    local args = {}
    for field in pairs(h.changed) do
      -- A count that came back where it was (a slot handed on) is not written.
      if h.v[field] ~= h.was[field] then
        args[#args + 1] = field
        args[#args + 1] = h.v[field]
      end
    end
    if #args > 0 then redis.call('HSET', key, unpack(args)) end
    h.was, h.changed = {}, {}
  end
  for in_flight_key, n in pairs(IN_FLIGHT_CHANGES) do
    -- At zero the count goes: a tenant with nothing in flight leaves no key behind.
    if n ~= 0 and redis.call('INCRBY', in_flight_key, n) == 0 then redis.call('DEL', in_flight_key) end
  end
  IN_FLIGHT_CHANGES = {}
  local by_set = {}
  local function add(set, score, member)
    by_set[set] = by_set[set] or {}
    local members = by_set[set]
    members[#members + 1] = score
    members[#members + 1] = member
  end
  for _, id in ipairs(RELEASED_ORDER) do
    local r = RELEASED[id]
    if r then
      add(children_key_of(r.prefix, STATUS.queued), r.index, id)
      add(r.queued_key, r.publish_by, id)
    end
  end
  for set, members in pairs(by_set) do zadd_all(set, members) end
  RELEASED, RELEASED_ORDER, released_pending = {}, {}, 0
end
