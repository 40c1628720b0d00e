-- ledgerIndex: add a record to one index (used on Redis Cluster, where the indexes live in other
-- slots than the entry and cannot be written by ledgerComplete). Safe to repeat.
-- KEYS[1] index; ARGV[1] entry key, ARGV[2] ttl ms or '' = never
--- @include "addToIndex"
addToIndex(KEYS[1], ARGV[1], ARGV[2])
return 1
