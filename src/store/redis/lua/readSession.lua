-- readSession: the values of some session keys and their versions, read at one instant.
-- A loop rather than HMGET + unpack, which fails beyond Lua's stack limit (~8000 arguments).
-- KEYS[1] state hash, KEYS[2] versions hash; ARGV the fields. Read-only.
local values, versions = {}, {}
for i = 1, #ARGV do
  values[i] = redis.call('HGET', KEYS[1], ARGV[i])
  versions[i] = redis.call('HGET', KEYS[2], ARGV[i])
end
return { values, versions }
