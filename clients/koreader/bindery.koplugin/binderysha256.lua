--[[
SHA-256 (FIPS 180-4) for LuaJIT, fed in pieces, so a book file is hashed without being read whole.
Bindery knows a book by the SHA-256 of its file; KOReader runs LuaJIT, whose `bit` library does the
32-bit arithmetic. The round constants are derived from the primes as the standard defines them.
--]]
local bit = require("bit")

local band, bor, bxor, bnot = bit.band, bit.bor, bit.bxor, bit.bnot
local rshift, lshift, ror, tobit, tohex = bit.rshift, bit.lshift, bit.ror, bit.tobit, bit.tohex
local byte, floor = string.byte, math.floor

local function primes(n)
    local list, candidate = {}, 2
    while #list < n do
        local is_prime = true
        for _, p in ipairs(list) do
            if p * p > candidate then break end
            if candidate % p == 0 then is_prime = false break end
        end
        if is_prime then list[#list + 1] = candidate end
        candidate = candidate + 1
    end
    return list
end

-- the first 32 bits of the fractional part of a root, as a signed 32-bit number (bit's domain)
local function fraction_bits(x)
    return tobit(floor((x - floor(x)) * 4294967296))
end

local P = primes(64)
local K, H0 = {}, {}
for i = 1, 64 do K[i] = fraction_bits(P[i] ^ (1 / 3)) end
for i = 1, 8 do H0[i] = fraction_bits(math.sqrt(P[i])) end

local W = {}
local function compress(h, block, at)
    for i = 1, 16 do
        local o = at + (i - 1) * 4
        local b1, b2, b3, b4 = byte(block, o, o + 3)
        W[i] = bor(lshift(b1, 24), lshift(b2, 16), lshift(b3, 8), b4)
    end
    for i = 17, 64 do
        local w15, w2 = W[i - 15], W[i - 2]
        local s0 = bxor(ror(w15, 7), ror(w15, 18), rshift(w15, 3))
        local s1 = bxor(ror(w2, 17), ror(w2, 19), rshift(w2, 10))
        W[i] = tobit(W[i - 16] + s0 + W[i - 7] + s1)
    end
    local a, b, c, d, e, f, g, hh = h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8]
    for i = 1, 64 do
        local S1 = bxor(ror(e, 6), ror(e, 11), ror(e, 25))
        local ch = bxor(band(e, f), band(bnot(e), g))
        local t1 = tobit(hh + S1 + ch + K[i] + W[i])
        local S0 = bxor(ror(a, 2), ror(a, 13), ror(a, 22))
        local maj = bxor(band(a, b), band(a, c), band(b, c))
        local t2 = tobit(S0 + maj)
        hh, g, f, e, d, c, b, a = g, f, e, tobit(d + t1), c, b, a, tobit(t1 + t2)
    end
    h[1], h[2], h[3], h[4] = tobit(h[1] + a), tobit(h[2] + b), tobit(h[3] + c), tobit(h[4] + d)
    h[5], h[6], h[7], h[8] = tobit(h[5] + e), tobit(h[6] + f), tobit(h[7] + g), tobit(h[8] + hh)
end

local Hasher = {}
Hasher.__index = Hasher

--- A new running hash: `:update(bytes)` any number of times, then `:hex()`.
local function new()
    local h = {}
    for i = 1, 8 do h[i] = H0[i] end
    return setmetatable({ h = h, pending = "", length = 0 }, Hasher)
end

function Hasher:update(data)
    self.length = self.length + #data
    local buf = self.pending .. data
    local whole = #buf - #buf % 64
    for at = 1, whole, 64 do compress(self.h, buf, at) end
    self.pending = buf:sub(whole + 1)
    return self
end

function Hasher:hex()
    local bits = self.length * 8
    local tail = self.pending .. "\128" .. string.rep("\0", (55 - #self.pending) % 64)
    -- the message length in bits, big-endian, 64 bits (two 32-bit halves)
    local hi, lo = floor(bits / 4294967296), bits % 4294967296
    local function be32(n)
        return string.char(floor(n / 16777216) % 256, floor(n / 65536) % 256, floor(n / 256) % 256, n % 256)
    end
    tail = tail .. be32(hi) .. be32(lo)
    local h = { unpack(self.h) }
    for at = 1, #tail, 64 do compress(h, tail, at) end
    local out = {}
    for i = 1, 8 do out[i] = tohex(h[i], 8) end
    return table.concat(out)
end

local M = { new = new }

--- The SHA-256 of a string, in lowercase hex.
function M.string(s)
    return new():update(s):hex()
end

--- The SHA-256 of a file, in lowercase hex, read in 64 KiB pieces; nil and a message when unreadable
--- or larger than `max_bytes` (when given).
function M.file(path, max_bytes)
    local f, err = io.open(path, "rb")
    if not f then return nil, err end
    if max_bytes then
        local size = f:seek("end")
        f:seek("set", 0)
        if size and size > max_bytes then
            f:close()
            return nil, "file larger than " .. max_bytes .. " bytes"
        end
    end
    local hasher = new()
    while true do
        local piece = f:read(65536)
        if not piece then break end
        hasher:update(piece)
    end
    f:close()
    return hasher:hex()
end

return M
