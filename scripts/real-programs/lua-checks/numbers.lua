-- Why this exists: exercises integer and float arithmetic in a dtld-linked Lua: wraparound,
-- integer division and modulo signs, conversions, the math library, string.format %g, and a
-- seeded math.random (deterministic xoshiro256**), plus a few numeric kernels.
print(math.maxinteger, math.mininteger, math.maxinteger + 1 == math.mininteger)
print(7 // 2, -7 // 2, 7 // -2, 7 % 3, -7 % 3, 7 % -3, 7.5 % 2, -7.5 % 2)
print(1 / 0, -1 / 0, 0/0 ~= 0/0, math.huge, -math.huge, math.pi)
print(3 / 2, 4 / 2, 2^10, 2^0.5, 10 // 0.0, -10 % math.huge)
print(math.type(1), math.type(1.0), math.type("1"), 1 == 1.0, math.ult(1, -1))
print(math.floor(-3.5), math.ceil(-3.5), math.floor(3.7), math.ceil(3.2), math.abs(math.mininteger))
print(math.fmod(7, 3), math.fmod(-7, 3), math.fmod(7, -3), math.max(3, 9, -1), math.min(3.5, 2, 8))
print(math.sqrt(2), math.exp(1), math.log(100, 10), math.log(8, 2), math.log(1))
print(string.format("%.10f %.10f %.10f", math.sin(1), math.cos(1), math.tan(1)))
print(string.format("%.10f %.10f %.10f", math.asin(0.5), math.acos(0.5), math.atan(1, 2)))
print(string.format("%g|%g|%g|%g|%g|%g", 0.0001, 0.00001, 123456, 1234567, 1e100, -0.0))
print(string.format("%g|%.3g|%10.4g|%-10g|%+g", 2/3, 2/3, 2/3, 2/3, 2/3))
print(8 // 3 * 3 + 8 % 3, 2^53 + 1 == 2^53, (2^53 | 0) + 1)
print(string.format("%d", 3.0), pcall(string.format, "%d", 3.5))
print(tostring(1e300 * 1e10), tostring(-1e300 * 1e10), 5 // 0.0, -5 // 0.0)
print(pcall(function() return 1 // 0 end))
print(pcall(function() return 1 % 0 end))
print(0x7fffffffffffffff, 0xffffffffffffffff, 0x10p2, 1e2, .5, 3., 0xA.8p0)
print(100000000000000, 1e15, 2^63, -(2^63), math.tointeger(2^62))
print("10" + 5, "3" * "4", 10 .. 20, "0x10" + 0, "1e1" * 1)

math.randomseed(42)
local rs = {}
for i = 1, 10 do rs[i] = math.random(1, 100) end
print("random ints", table.concat(rs, " "))
local fsum = 0
for _ = 1, 1000 do fsum = fsum + math.random() end
print("random floats", string.format("%.12f", fsum))
print("random range", math.random(0), math.random(-5, 5))

-- sieve of Eratosthenes
local N = 100000
local composite = {}
local count, last = 0, 0
for i = 2, N do
    if not composite[i] then
        count = count + 1; last = i
        for j = i * i, N, i do composite[j] = true end
    end
end
print("primes", count, last)

-- integer hash (FNV-1a style with wraparound)
local h = 0xcbf29ce484222325
for i = 1, 10000 do h = (h ~ (i & 0xff)) * 0x100000001b3 end
print("fnv", string.format("%016x", h))

-- float kernel: n-body-ish integration with %g output
local x, v = 1.0, 0.0
local dt = 0.001
for _ = 1, 10000 do
    local a = -x
    v = v + a * dt
    x = x + v * dt
end
print(string.format("oscillator %.9g %.9g", x, v))

-- mandelbrot checksum
local inside = 0
for py = 0, 59 do
    for px = 0, 79 do
        local cr, ci = px / 40 - 1.5, py / 30 - 1.0
        local zr, zi, n = 0.0, 0.0, 0
        while n < 50 and zr * zr + zi * zi < 4 do
            zr, zi = zr * zr - zi * zi + cr, 2 * zr * zi + ci
            n = n + 1
        end
        if n == 50 then inside = inside + 1 end
    end
end
print("mandelbrot", inside)
assert(count == 9592 and last == 99991)
print("numbers: ok")
