-- rateLimit: counts one request of a key in a fixed window, in one step: the first request starts the
-- window (PEXPIRE), the later ones read what is left of it. Every replica counts in the same key, so a
-- limit holds across the fleet. A repeat counts twice: the store's connection never re-sends a command.
-- KEYS[1] counter; ARGV[1] window ms. Returns {count, ms left in the window}.
local current = redis.call('INCR', KEYS[1])
local ttl = tonumber(ARGV[1])
if current == 1 then
  redis.call('PEXPIRE', KEYS[1], ttl)
else
  ttl = redis.call('PTTL', KEYS[1])
end
return {current, ttl}
