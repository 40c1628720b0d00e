-- pinDefinition: the pin of one tool (docs/mcp-sources.md, "Pinning definitions"), read and changed in one step.
-- mode "see": an upstream served `hash`; the first hash seen becomes current; a hash other than
-- current becomes pending, and seeing current again clears pending. mode "accept": `hash` becomes
-- current and pending is cleared. Safe to repeat. Answers {current, pending or false}.
-- KEYS[1] name -> current hash, KEYS[2] name -> pending hash (one hash tag)
-- ARGV[1] mode, ARGV[2] tool name, ARGV[3] hash
local name, hash = ARGV[2], ARGV[3]
if ARGV[1] == 'accept' then
  redis.call('HSET', KEYS[1], name, hash)
  redis.call('HDEL', KEYS[2], name)
  return {hash, false}
end
local current = redis.call('HGET', KEYS[1], name)
if not current then
  redis.call('HSET', KEYS[1], name, hash)
  current = hash
end
if current == hash then
  redis.call('HDEL', KEYS[2], name)
  return {current, false}
end
redis.call('HSET', KEYS[2], name, hash)
return {current, hash}
