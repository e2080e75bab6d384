-- Why this exists: exercises Lua's string library (formatting, patterns, gsub, byte/char,
-- pack/unpack, utf8) in a dtld-linked interpreter; the output is compared byte for byte with
-- the ld.lld-22-linked build, and the asserts make the script check itself.
local out = {}
local function emit(...)
    local parts = table.pack(...)
    for i = 1, parts.n do parts[i] = tostring(parts[i]) end
    out[#out + 1] = table.concat(parts, "\t", 1, parts.n)
end

-- format
emit(string.format("%d %5d %-5d| %05d %x %X %o", 42, 42, 42, 42, 255, 255, 8))
emit(string.format("%g %g %g %g %g", 1e20, 0.1, 1/3, 100, 2^63))
emit(string.format("%.3f %10.2f %e %.14g %a", math.pi, -2.5, 12345.678, 0.1, 1.0))
emit(string.format("%q", "a\nb\0c\"d\\"), string.format("%q", 1/0), string.format("%q", math.mininteger))
emit(string.format("%s %s %s %10s|%-10s|", nil, true, 12.0, "right", "left"))
emit(string.format("%c%c%c", 76, 117, 97))

-- patterns
local s = "The quick brown fox jumps over the lazy dog 1234 5.67"
emit(s:find("quick"), s:find("o", 15, true), s:find("%d+"))
emit(s:match("(%a+) (%a+)$") or "nil", s:match("(%d+)%s+([%d.]+)"))
local words = {}
for w in s:gmatch("%a+") do words[#words + 1] = w:lower() end
emit(#words, table.concat(words, ","))
emit((s:gsub("%w+", function(w) return #w end)))
emit((s:gsub("(%w+) (%w+)", "%2 %1", 2)))
emit(("hello world"):gsub("o", {o = "0"}))
emit(("  trim me  "):match("^%s*(.-)%s*$") .. "|")
emit(("key=value; k2=v2"):gsub("(%w+)=(%w+)", "%2=%1"))
emit(("THE (quick) fox"):find("%((%a+)%)"))
emit(("[[x]]"):match("%[(%b[])%]"), ("f(a(b)c)d"):match("%b()"))
emit(("hello"):rep(3, "-"), ("abc"):reverse(), ("MiXeD"):upper(), ("MiXeD"):lower())
emit(("abcdef"):sub(2, 4), ("abcdef"):sub(-3), ("abcdef"):sub(5, 100), #("abcdef"):sub(4, 2))
emit(string.byte("ABC", 1, -1), string.char(0x4c, 0x75, 0x61))
emit(("%d"):format(3), tostring(12):len(), ("x"):byte())
emit(("frontier THE end"):gsub("%f[%a]%a+", "W"))

-- pack / unpack
local packed = string.pack("<i4 >I2 z s1 d", -2, 513, "zs", "len", 0.5)
emit(#packed, string.format(("%02x"):rep(#packed), packed:byte(1, -1)))
local a, b, c, d, e = string.unpack("<i4 >I2 z s1 d", packed)
emit(a, b, c, d, e)
emit(string.packsize("i4i8d"), string.packsize("!8 i1 i8"))

-- utf8
local u = "h\u{e9}llo w\u{f6}rld \u{1F600}"
emit(utf8.len(u), #u, utf8.char(72, 233, 0x1F600) == "H\u{e9}\u{1F600}")
local cps = {}
for _, cp in utf8.codes(u) do cps[#cps + 1] = cp end
emit(table.concat(cps, " "))
emit(utf8.offset(u, 3), utf8.codepoint(u, 2, 3))

-- tostring / tonumber
emit(tonumber("0x10"), tonumber("  12  "), tonumber("1e2"), tonumber("z", 36), tonumber("777", 8), tonumber("1.5x"))
emit(tostring(1e15), tostring(1e16), tostring(-0.0), tostring(2^53), 10 // 3, 10.0 // 3, -7 % 3)
emit(math.tointeger(3.0), math.tointeger(3.5), 3 | 4, 7 & 10, 5 ~ 3, ~0, 1 << 62, 256 >> 4)

-- self-checks
assert(("abc"):rep(0) == "")
assert(select("#", ("a,b,,c"):gsub(",", ";")) == 2)
assert(string.format("%5.1f", 3.14159) == "  3.1")
assert(("x"):rep(1000):len() == 1000)
local big = {}
for i = 1, 2000 do big[i] = string.format("%04d", i) end
local joined = table.concat(big, ",")
assert(#joined == 2000 * 5 - 1)
assert(select(2, joined:gsub(",", ",")) == 1999)

for _, line in ipairs(out) do io.write(line, "\n") end
print("strings: ok")
