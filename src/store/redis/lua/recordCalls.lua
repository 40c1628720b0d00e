-- recordCalls: appends a batch of call entries to the recent-calls list, keeps the newest, and
-- publishes the batch so every replica's console sees it, in one round trip.
-- KEYS[1] list (newest first); ARGV[1] how many to keep, ARGV[2] channel, ARGV[3] the batch: the
-- entries oldest first, one a line (JSON text holds no raw newline), sent once and published as it is.
-- Safe to repeat: a repeat only shows the batch twice in the feed.
local batch = ARGV[3]
local entries = {}
local from = 1
while true do
  local stop = string.find(batch, '\n', from, true)
  if stop == nil then
    entries[#entries + 1] = string.sub(batch, from)
    break
  end
  entries[#entries + 1] = string.sub(batch, from, stop - 1)
  from = stop + 1
end
-- LPUSH takes many values at once; a chunk keeps the Lua stack small whatever the batch.
for i = 1, #entries, 200 do
  redis.call('LPUSH', KEYS[1], unpack(entries, i, math.min(i + 199, #entries)))
end
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[1]) - 1)
redis.call('PUBLISH', ARGV[2], batch)
return #entries
