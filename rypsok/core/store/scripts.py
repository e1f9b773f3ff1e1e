"""The Lua scripts of the redis backend.

Each operation that reads state and then writes it is one script, which Redis runs
atomically: two replicas can never both see the last free place. Every script reads the
time from the Redis server (TIME), never from a replica, so replicas whose clocks
disagree still share one window, one bucket and one cooldown. Times are milliseconds.

A key's end of life is set as a time (PEXPIREAT, PXAT), from that same reading: the
moment PEXPIRE or PX would set, which a test can then judge against a clock of its own
(`on_test_clock`).
"""

from __future__ import annotations

import re
from typing import Final

# The server's time in milliseconds, with the microseconds as a fraction.
_NOW: Final = """
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
"""

# KEYS[1] the caller's window of one tool; ARGV: limit, window ms, ticket.
# 0: admitted (the ticket joins the window); otherwise ms until the oldest call leaves.
ADMIT_CALL: Final = (
    _NOW
    + """
local now = math.floor(now_ms())
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return math.max(1, tonumber(oldest[2]) + window - now + 1)
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIREAT', KEYS[1], now + window)
return 0
"""
)

# The token bucket of one engine: a hash of tokens, stamp (when tokens was right) and
# not_before (a provider's Retry-After). It lives until it would be full and unheld
# again, after which a missing key reads as exactly that.
_BUCKET: Final = (
    _NOW
    + """
local interval = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local now = now_ms()
local state = redis.call('HMGET', KEYS[1], 'tokens', 'stamp', 'not_before')
local stamp = tonumber(state[2]) or now
local tokens = tonumber(state[1]) or capacity
tokens = math.min(capacity, tokens + math.max(0, now - stamp) / interval)
local not_before = tonumber(state[3]) or 0
local function keep(tokens_left, until_ms)
  local life = math.max((capacity - tokens_left) * interval, until_ms - now)
  redis.call('PEXPIREAT', KEYS[1], math.floor(now) + math.ceil(life) + 1000)
end
"""
)

# ARGV: interval ms, capacity, longest wait ms. -1: the turn comes too late (nothing
# taken); otherwise the wait in microseconds, the token taken now so that concurrent
# callers queue one behind the other (tokens may go below zero).
RESERVE: Final = (
    _BUCKET
    + """
local wait = 0
if tokens < 1 then wait = (1 - tokens) * interval end
local at = math.max(now + wait, not_before)
if at > now + tonumber(ARGV[3]) then return -1 end
tokens = tokens - 1
redis.call('HSET', KEYS[1], 'tokens', tokens, 'stamp', now)
keep(tokens, not_before)
return math.ceil((at - now) * 1000)
"""
)

# ARGV: interval ms, capacity, pause ms. No turn before now + pause (a longer pause
# already asked for stays).
HOLD: Final = (
    _BUCKET
    + """
not_before = math.max(not_before, now + tonumber(ARGV[3]))
redis.call('HSET', KEYS[1], 'not_before', not_before)
keep(tokens, not_before)
return 1
"""
)

# KEYS[1] the engine's leases, scored by expiry; ARGV: capacity, lease ms, token.
# 1: the lease is taken; 0: every slot is leased.
SLOT_ACQUIRE: Final = (
    _NOW
    + """
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIREAT', KEYS[1], math.floor(now) + tonumber(ARGV[2]))
return 1
"""
)

# The circuit of one engine: a hash of failures, open_until, cooldown_ms (the base the
# next failed probe doubles), probe (the probing request's token) and probe_until (its
# lease). No key at all is a closed circuit with no failure.

# ARGV: probe lease ms, token. Returns go, probe or skip.
CIRCUIT_ADMIT: Final = (
    _NOW
    + """
local now = now_ms()
local state = redis.call('HMGET', KEYS[1], 'open_until', 'probe_until')
local probe_until = tonumber(state[2])
if probe_until and probe_until > now then return 'skip' end
local open_until = tonumber(state[1])
if not open_until then return 'go' end
if now < open_until then return 'skip' end
redis.call('HSET', KEYS[1], 'probe', ARGV[2], 'probe_until', now + tonumber(ARGV[1]))
return 'probe'
"""
)

# 1 when this success closed an open circuit.
CIRCUIT_SUCCESS: Final = """
local was_open = redis.call('HEXISTS', KEYS[1], 'open_until')
redis.call('DEL', KEYS[1])
return was_open
"""

# ARGV: counted (1 or 0), Retry-After ms (-1: none), failures to open, first cooldown
# ms, longest cooldown ms. -1 when the circuit did not open now; otherwise the
# cooldown ms it opened for.
CIRCUIT_FAILURE: Final = (
    _NOW
    + """
local now = now_ms()
local state = redis.call('HMGET', KEYS[1], 'failures', 'open_until', 'cooldown_ms', 'probe')
local counted = ARGV[1] == '1'
local longest = tonumber(ARGV[5])
local cooldown = tonumber(state[3]) or tonumber(ARGV[4])
local opens = false
if state[4] then
  -- The probe ended badly: open again, for twice as long when the provider is unwell.
  redis.call('HDEL', KEYS[1], 'probe', 'probe_until')
  if counted then cooldown = math.min(cooldown * 2, longest) end
  opens = true
elseif counted then
  local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
  opens = failures >= tonumber(ARGV[3]) and not state[2]
end
if not opens then return -1 end
local effective = cooldown
local retry = tonumber(ARGV[2])
if retry >= 0 then effective = math.max(cooldown, math.min(retry, longest)) end
redis.call('HSET', KEYS[1], 'open_until', now + effective, 'cooldown_ms', cooldown)
return math.ceil(effective)
"""
)

# ARGV: token. Only the request that took the probe gives it back.
CIRCUIT_ABANDON: Final = """
if redis.call('HGET', KEYS[1], 'probe') == ARGV[1] then
  redis.call('HDEL', KEYS[1], 'probe', 'probe_until')
  return 1
end
return 0
"""

# KEYS: every engine's circuit. One state per key, in order.
CIRCUIT_STATES: Final = (
    _NOW
    + """
local now = now_ms()
local states = {}
for i, key in ipairs(KEYS) do
  local state = redis.call('HMGET', key, 'open_until', 'probe_until')
  local probe_until = tonumber(state[2])
  if probe_until and probe_until > now then
    states[i] = 'half_open'
  elseif state[1] then
    states[i] = 'open'
  else
    states[i] = 'closed'
  end
end
return states
"""
)

# KEYS[1] the entry, KEYS[2] the index of entries by store time; ARGV: value, life ms,
# most entries, the entry's index member, the prefix that makes a member a key.
# Storing past the bound removes the oldest entries, deployment-wide.
BOUNDED_PUT: Final = (
    _NOW
    + """
local now = now_ms()
local life = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - life)
local ends = math.floor(now) + life
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ends)
redis.call('ZADD', KEYS[2], now, ARGV[4])
local extra = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if extra > 0 then
  for _, member in ipairs(redis.call('ZRANGE', KEYS[2], 0, extra - 1)) do
    redis.call('DEL', ARGV[5] .. member)
  end
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, extra - 1)
end
redis.call('PEXPIREAT', KEYS[2], ends)
return 1
"""
)

# KEYS[1] the returned URLs' digests by time; ARGV: most kept, then the digests.
REMEMBER: Final = (
    _NOW
    + """
local now = now_ms()
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], now, ARGV[i])
end
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[1]) + 1))
return 1
"""
)

_CLOCK_KEY: Final = re.compile(r"[A-Za-z0-9:_.-]+")


def on_test_clock(source: str, key: str) -> str:
    """`source` reading the time (ms) from the string at `key` instead of TIME.

    For tests that move time by hand, never for serving: the key is not declared to
    Redis, which a cluster would refuse."""
    if not _CLOCK_KEY.fullmatch(key):
        raise ValueError("a clock key of letters, digits and :_.- only")
    clock = f"""
local function now_ms()
  return tonumber(redis.call('GET', '{key}'))
end
"""
    return source.replace(_NOW, clock)


__all__ = [
    "ADMIT_CALL",
    "BOUNDED_PUT",
    "CIRCUIT_ABANDON",
    "CIRCUIT_ADMIT",
    "CIRCUIT_FAILURE",
    "CIRCUIT_STATES",
    "CIRCUIT_SUCCESS",
    "HOLD",
    "REMEMBER",
    "RESERVE",
    "SLOT_ACQUIRE",
    "on_test_clock",
]
