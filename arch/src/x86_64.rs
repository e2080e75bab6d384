//! x86-64 (System V psABI) relocations, PLT templates and relaxations.
//!
//! ISA notes that shape this file:
//! * x86-64 has no branch-range problem for normal code (±2 GiB PC-relative reach covers every
//!   small/medium-model program), so there are no thunks.
//! * The thread pointer (`%fs:0`) points at the *end* of the executable's TLS block (TLS variant
//!   II): a local-exec offset is `address - tls_end`, negative.
//! * Compilers emit code sequences that the linker may rewrite when it learns more than the compiler
//!   knew: a GOT load of a symbol that turns out to be local becomes a `lea` (GOTPCRELX), and the
//!   general-dynamic TLS call sequence becomes a `%fs`-relative access in an executable. Those
//!   rewrites are not optional in practice: static-PIE start-up code uses GOT relocations before it
//!   can relocate itself, and `__tls_get_addr` does not exist in a static executable.
//! * PLT entries use `%r11`-free sequences: `jmp *slot(%rip)` plus the lazy-binding push/jmp.

/// Raw relocation type numbers (psABI table 4.9). Only this crate uses them.
pub mod r {
    pub const NONE: u32 = 0;
    pub const R64: u32 = 1;
    pub const PC32: u32 = 2;
    pub const GOT32: u32 = 3;
    pub const PLT32: u32 = 4;
    pub const COPY: u32 = 5;
    pub const GLOB_DAT: u32 = 6;
    pub const JUMP_SLOT: u32 = 7;
    pub const RELATIVE: u32 = 8;
    pub const GOTPCREL: u32 = 9;
    pub const R32: u32 = 10;
    pub const R32S: u32 = 11;
    pub const R16: u32 = 12;
    pub const PC16: u32 = 13;
    pub const R8: u32 = 14;
    pub const PC8: u32 = 15;
    pub const DTPMOD64: u32 = 16;
    pub const DTPOFF64: u32 = 17;
    pub const TPOFF64: u32 = 18;
    pub const TLSGD: u32 = 19;
    pub const TLSLD: u32 = 20;
    pub const DTPOFF32: u32 = 21;
    pub const GOTTPOFF: u32 = 22;
    pub const TPOFF32: u32 = 23;
    pub const PC64: u32 = 24;
    pub const GOTOFF64: u32 = 25;
    pub const GOTPC32: u32 = 26;
    pub const GOT64: u32 = 27;
    pub const GOTPCREL64: u32 = 28;
    pub const GOTPC64: u32 = 29;
    pub const GOTPLT64: u32 = 30;
    pub const PLTOFF64: u32 = 31;
    pub const SIZE32: u32 = 32;
    pub const SIZE64: u32 = 33;
    pub const GOTPC32_TLSDESC: u32 = 34;
    pub const TLSDESC_CALL: u32 = 35;
    pub const TLSDESC: u32 = 36;
    pub const IRELATIVE: u32 = 37;
    pub const GOTPCRELX: u32 = 41;
    pub const REX_GOTPCRELX: u32 = 42;
}

/// What a relocation computes, independent of its encoding. Notation as in the psABI: S symbol
/// value, A addend, P place, G GOT-slot offset, GOT the GOT base, L the PLT entry, Z symbol size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RelKind {
    /// Nothing to do.
    None,
    /// S + A.
    Abs,
    /// S + A - P.
    Pc,
    /// L + A - P: a call or jump that may go through the PLT.
    PltPc,
    /// G + GOT + A - P: a GOT slot's address, PC-relative (GOTPCREL).
    GotPc,
    /// Like `GotPc`, but the instruction may be rewritten to not use the GOT (GOTPCRELX).
    GotPcRelax,
    /// Like `GotPcRelax` with a REX prefix (REX_GOTPCRELX).
    GotPcRelaxRex,
    /// G + A: offset of the symbol's GOT slot from the GOT base (GOT32, GOT64).
    GotOff,
    /// GOT + A - P (GOTPC32/GOTPC64: address of `_GLOBAL_OFFSET_TABLE_`).
    GotBasePc,
    /// S + A - GOT (GOTOFF64).
    RelGotBase,
    /// L + A - GOT (PLTOFF64).
    PltRelGotBase,
    /// Z + A.
    Size,
    /// General-dynamic TLS: the address of a two-slot GOT entry, PC-relative.
    TlsGd,
    /// Local-dynamic TLS: the address of the module's two-slot GOT entry, PC-relative.
    TlsLd,
    /// Offset from the module's TLS block start (DTPOFF32/64).
    DtpOff,
    /// Initial-exec TLS: the address of a GOT slot holding the TP offset, PC-relative.
    GotTpOff,
    /// Local-exec TLS: S + A - TP (TPOFF32/64).
    TpOff,
    /// TLS descriptors: the address of a two-slot descriptor, PC-relative.
    TlsDescPc,
    /// Marker on the indirect call through a TLS descriptor.
    TlsDescCall,
    /// A relocation type dtld does not handle (reported with its number).
    Unknown,
}

/// The width and signedness of the field a relocation writes, for overflow checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    None,
    U8,
    I8,
    U16,
    I16,
    /// R_X86_64_32: zero-extended 32 bits.
    U32,
    /// Signed 32 bits.
    I32,
    /// Full 64 bits.
    W64,
}

impl Field {
    pub const fn size(self) -> usize {
        match self {
            Field::None => 0,
            Field::U8 | Field::I8 => 1,
            Field::U16 | Field::I16 => 2,
            Field::U32 | Field::I32 => 4,
            Field::W64 => 8,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelInfo {
    pub kind: RelKind,
    pub field: Field,
}

/// Maps a raw relocation type to what it means.
pub const fn rel_info(r_type: u32) -> RelInfo {
    use Field::*;
    use RelKind::*;
    let (kind, field) = match r_type {
        r::NONE => (RelKind::None, Field::None),
        r::R64 => (Abs, W64),
        r::PC32 => (Pc, I32),
        r::GOT32 => (GotOff, I32),
        r::PLT32 => (PltPc, I32),
        r::GOTPCREL => (GotPc, I32),
        r::R32 => (Abs, U32),
        r::R32S => (Abs, I32),
        r::R16 => (Abs, U16),
        r::PC16 => (Pc, I16),
        r::R8 => (Abs, U8),
        r::PC8 => (Pc, I8),
        r::DTPOFF64 => (DtpOff, W64),
        r::TPOFF64 => (TpOff, W64),
        r::TLSGD => (TlsGd, I32),
        r::TLSLD => (TlsLd, I32),
        r::DTPOFF32 => (DtpOff, I32),
        r::GOTTPOFF => (GotTpOff, I32),
        r::TPOFF32 => (TpOff, I32),
        r::PC64 => (Pc, W64),
        r::GOTOFF64 => (RelGotBase, W64),
        r::GOTPC32 => (GotBasePc, I32),
        r::GOT64 => (GotOff, W64),
        r::GOTPCREL64 => (GotPc, W64),
        r::GOTPC64 => (GotBasePc, W64),
        r::GOTPLT64 => (GotOff, W64),
        r::PLTOFF64 => (PltRelGotBase, W64),
        r::SIZE32 => (Size, U32),
        r::SIZE64 => (Size, W64),
        r::GOTPC32_TLSDESC => (TlsDescPc, I32),
        r::TLSDESC_CALL => (TlsDescCall, Field::None),
        r::GOTPCRELX => (GotPcRelax, I32),
        r::REX_GOTPCRELX => (GotPcRelaxRex, I32),
        _ => (Unknown, Field::None),
    };
    RelInfo { kind, field }
}

/// The addend a REL relocation (no `r_addend`) keeps in the bytes it relocates, as lld's
/// `getImplicitAddend` reads it: the field sign-extended to 64 bits. `None` when `loc` is too
/// short or the type has no field to read (`R_X86_64_NONE`, `TLSDESC_CALL`: addend 0).
pub fn implicit_addend(r_type: u32, loc: &[u8]) -> Option<i64> {
    let size = rel_info(r_type).field.size();
    if loc.len() < size {
        return None;
    }
    Some(match size {
        0 => 0,
        1 => loc[0] as i8 as i64,
        2 => i16::from_le_bytes([loc[0], loc[1]]) as i64,
        4 => i32::from_le_bytes(loc[..4].try_into().unwrap()) as i64,
        _ => i64::from_le_bytes(loc[..8].try_into().unwrap()),
    })
}

/// Name of a relocation type for diagnostics, as lld prints it.
pub fn rel_name(r_type: u32) -> String {
    let n = match r_type {
        r::NONE => "R_X86_64_NONE",
        r::R64 => "R_X86_64_64",
        r::PC32 => "R_X86_64_PC32",
        r::GOT32 => "R_X86_64_GOT32",
        r::PLT32 => "R_X86_64_PLT32",
        r::COPY => "R_X86_64_COPY",
        r::GLOB_DAT => "R_X86_64_GLOB_DAT",
        r::JUMP_SLOT => "R_X86_64_JUMP_SLOT",
        r::RELATIVE => "R_X86_64_RELATIVE",
        r::GOTPCREL => "R_X86_64_GOTPCREL",
        r::R32 => "R_X86_64_32",
        r::R32S => "R_X86_64_32S",
        r::R16 => "R_X86_64_16",
        r::PC16 => "R_X86_64_PC16",
        r::R8 => "R_X86_64_8",
        r::PC8 => "R_X86_64_PC8",
        r::DTPMOD64 => "R_X86_64_DTPMOD64",
        r::DTPOFF64 => "R_X86_64_DTPOFF64",
        r::TPOFF64 => "R_X86_64_TPOFF64",
        r::TLSGD => "R_X86_64_TLSGD",
        r::TLSLD => "R_X86_64_TLSLD",
        r::DTPOFF32 => "R_X86_64_DTPOFF32",
        r::GOTTPOFF => "R_X86_64_GOTTPOFF",
        r::TPOFF32 => "R_X86_64_TPOFF32",
        r::PC64 => "R_X86_64_PC64",
        r::GOTOFF64 => "R_X86_64_GOTOFF64",
        r::GOTPC32 => "R_X86_64_GOTPC32",
        r::GOT64 => "R_X86_64_GOT64",
        r::GOTPCREL64 => "R_X86_64_GOTPCREL64",
        r::GOTPC64 => "R_X86_64_GOTPC64",
        r::GOTPLT64 => "R_X86_64_GOTPLT64",
        r::PLTOFF64 => "R_X86_64_PLTOFF64",
        r::SIZE32 => "R_X86_64_SIZE32",
        r::SIZE64 => "R_X86_64_SIZE64",
        r::GOTPC32_TLSDESC => "R_X86_64_GOTPC32_TLSDESC",
        r::TLSDESC_CALL => "R_X86_64_TLSDESC_CALL",
        r::TLSDESC => "R_X86_64_TLSDESC",
        r::IRELATIVE => "R_X86_64_IRELATIVE",
        r::GOTPCRELX => "R_X86_64_GOTPCRELX",
        r::REX_GOTPCRELX => "R_X86_64_REX_GOTPCRELX",
        _ => return format!("Unknown ({r_type})"),
    };
    n.to_string()
}

/// Writes `value` into `field` at `loc`. Returns false if the value does not fit (the caller
/// reports lld's "relocation ... out of range").
pub fn write_field(loc: &mut [u8], field: Field, value: u64) -> bool {
    let v = value as i64;
    let fits = match field {
        Field::None => return true,
        Field::U8 => (-128..=255).contains(&v),
        Field::I8 => (-128..=127).contains(&v),
        Field::U16 => (-32768..=65535).contains(&v),
        Field::I16 => (-32768..=32767).contains(&v),
        Field::U32 => (0..=u32::MAX as i64).contains(&v),
        Field::I32 => (i32::MIN as i64..=i32::MAX as i64).contains(&v),
        Field::W64 => true,
    };
    let n = field.size();
    loc[..n].copy_from_slice(&value.to_le_bytes()[..n]);
    fits
}

/// Reads the field (used for REL-style implicit addends; x86-64 objects use RELA, but dynamic
/// relocation checks and tests read fields back).
pub fn read_field(loc: &[u8], field: Field) -> i64 {
    match field {
        Field::None => 0,
        Field::U8 => loc[0] as i64,
        Field::I8 => loc[0] as i8 as i64,
        Field::U16 => u16::from_le_bytes([loc[0], loc[1]]) as i64,
        Field::I16 => i16::from_le_bytes([loc[0], loc[1]]) as i64,
        Field::U32 => u32::from_le_bytes(loc[..4].try_into().unwrap()) as i64,
        Field::I32 => i32::from_le_bytes(loc[..4].try_into().unwrap()) as i64,
        Field::W64 => i64::from_le_bytes(loc[..8].try_into().unwrap()),
    }
}

// ---------------------------------------------------------------------------------------------
// Relaxations. Each rewrites the instruction bytes around a relocation's field; `sec` is the
// section contents and `off` the offset of the relocation's 4-byte field. They return the new
// relocation kind the caller must then apply at the same field, or `None` if the code pattern is
// not one the relaxation knows (the caller then keeps the unrelaxed form, as lld does).
// ---------------------------------------------------------------------------------------------

/// What a relaxed relocation becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relaxed {
    /// Write S + A - P into the field (the GOT load became a direct PC-relative access).
    Pc,
    /// Write S + A into the field as a 32-bit absolute (non-PIC immediate forms).
    Abs,
    /// Write the local-exec TP offset (S + A - TP) into the field.
    TpOff,
    /// Write the address of the symbol's GOT slot holding its TP offset, PC-relative (GD→IE).
    GotTpOffPc,
    /// The GOT jump became `jmp foo; nop`: write S + A - P with `write_relaxed_jmp`.
    Jmp,
}

/// `mov foo@GOTPCREL(%rip), %reg` → `lea foo(%rip), %reg`; `call *foo@GOTPCREL(%rip)` →
/// `addr32 call foo`; `jmp *foo@GOTPCREL(%rip)` → `jmp foo; nop`. These keep PC-relative
/// addressing and are valid for any symbol whose address is known at link time and reachable.
///
/// In position-dependent output the REX forms of `test` and the binary operations also relax
/// (see `is_gotpcrelx_imm_form`): `test %reg, foo@GOTPCREL(%rip)` → `test $foo, %reg` and
/// `add/adc/and/cmp/or/sbb/sub/xor foo@GOTPCREL(%rip), %reg` → `op $foo, %reg`, returning
/// `Relaxed::Abs` (the sign-extended immediate is the symbol's address). The caller decides
/// (in its relocation scan) that the output is non-PIC; `mov` stays a `lea`, as in lld.
pub fn relax_gotpcrelx(sec: &mut [u8], off: usize, rex: bool) -> Option<Relaxed> {
    if off < 2 {
        return None;
    }
    let op = sec[off - 2];
    let modrm = sec[off - 1];
    // ModRM must be RIP-relative (mod=00, rm=101).
    if modrm & 0xc7 != 0x05 {
        return None;
    }
    match op {
        0x8b => {
            // mov r/m64, reg → lea
            sec[off - 2] = 0x8d;
            Some(Relaxed::Pc)
        }
        0xff if !rex => {
            let reg = (modrm >> 3) & 7;
            if reg == 2 {
                // call *foo(%rip) → addr32 call foo
                sec[off - 2] = 0x67;
                sec[off - 1] = 0xe8;
                Some(Relaxed::Pc)
            } else if reg == 4 {
                // jmp *foo(%rip) → jmp foo; nop (see `write_relaxed_jmp`).
                sec[off - 2] = 0xe9;
                Some(Relaxed::Jmp)
            } else {
                None
            }
        }
        _ if rex && is_gotpcrelx_imm_form(sec, off) => {
            let reg = (modrm >> 3) & 7;
            let prefix = sec[off - 3];
            // The register moves from ModRM.reg to ModRM.rm (mod=11), so its REX.R extension
            // bit moves to REX.B.
            sec[off - 3] = (prefix & !0x4) | ((prefix & 0x4) >> 2);
            if op == 0x85 {
                // TEST r/m64, r64 → TEST r/m64, imm32 (F7 /0).
                sec[off - 2] = 0xf7;
                sec[off - 1] = 0xc0 | reg;
            } else {
                // OP r64, r/m64 (opcode 00ooo011) → 81 /ooo r/m64, imm32.
                sec[off - 2] = 0x81;
                sec[off - 1] = 0xc0 | (op & 0x38) | reg;
            }
            Some(Relaxed::Abs)
        }
        _ => None,
    }
}

/// Whether a REX_GOTPCRELX field at `off` belongs to `test` or a binary operation
/// (`add/or/adc/sbb/and/sub/xor/cmp reg, r/m`) with a REX prefix and RIP-relative operand:
/// the forms that, in non-PIC output only, relax to an immediate holding the address.
pub fn is_gotpcrelx_imm_form(sec: &[u8], off: usize) -> bool {
    if off < 3 || sec.len() < off + 4 {
        return false;
    }
    let (prefix, op, modrm) = (sec[off - 3], sec[off - 2], sec[off - 1]);
    prefix & 0xf0 == 0x40 && modrm & 0xc7 == 0x05 && (op == 0x85 || op & 0xc7 == 0x03)
}

/// For the `jmp *foo@GOTPCREL(%rip)` relaxation the 4-byte displacement must start right after the
/// new one-byte opcode `e9` at `off - 2`, one byte before the original field, and a nop follows. `disp` is S + A - P computed for the original field
/// position `off` (P = address of `off`).
pub fn write_relaxed_jmp(sec: &mut [u8], off: usize, disp_at_off: i64) {
    // The new instruction is `e9 <rel32>` at off-2, ending at off+3, followed by a nop at off+3.
    // rel32 is relative to the end of the jmp (off+3), whereas the psABI field value S+A-P uses
    // P = off with A = -4 (end of the original instruction is off+4). So rel32 = disp + 1.
    let rel = (disp_at_off + 1) as i32;
    sec[off - 1..off + 3].copy_from_slice(&rel.to_le_bytes());
    sec[off + 3] = 0x90;
}

/// The general-dynamic sequence a compiler emits:
/// `66 48 8d 3d <tlsgd>` `66 66 48 e8 <plt32 __tls_get_addr>` (16 bytes), or with `-fno-plt`
/// `66 48 8d 3d <tlsgd>` `66 48 ff 15 <gotpcrelx __tls_get_addr>`-style forms.
/// Returns the length of the call part following the lea, if recognised.
fn gd_call_len(sec: &[u8], off: usize) -> Option<usize> {
    if off < 4 || sec.len() < off + 4 + 4 {
        return None;
    }
    if sec[off - 4..off] != [0x66, 0x48, 0x8d, 0x3d] {
        return None;
    }
    let c = &sec[off + 4..];
    if c.len() >= 8 && c[..4] == [0x66, 0x66, 0x48, 0xe8] {
        return Some(8);
    }
    if c.len() >= 8 && c[..4] == [0x66, 0x48, 0xff, 0x15] {
        return Some(8);
    }
    None
}

/// GD → LE: the 16-byte sequence becomes `mov %fs:0,%rax; lea x@tpoff(%rax),%rax`.
/// Returns the offset (within `sec`) of the new 4-byte TP-offset field, or `None`.
/// The caller must skip the relocation on the `__tls_get_addr` call that follows.
pub fn relax_tls_gd_to_le(sec: &mut [u8], off: usize) -> Option<usize> {
    gd_call_len(sec, off)?;
    let start = off - 4;
    const SEQ: [u8; 16] = [
        0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0, // mov %fs:0,%rax
        0x48, 0x8d, 0x80, 0, 0, 0, 0, // lea x@tpoff(%rax),%rax
    ];
    sec[start..start + 16].copy_from_slice(&SEQ);
    Some(start + 12)
}

/// GD → IE: the 16-byte sequence becomes `mov %fs:0,%rax; add x@gottpoff(%rip),%rax`.
/// Returns the offset of the new PC-relative GOT-slot field (its P is that offset; the addend to
/// use is -4 relative to the end of the instruction, which is the field's end).
pub fn relax_tls_gd_to_ie(sec: &mut [u8], off: usize) -> Option<usize> {
    gd_call_len(sec, off)?;
    let start = off - 4;
    const SEQ: [u8; 16] = [
        0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0, // mov %fs:0,%rax
        0x48, 0x03, 0x05, 0, 0, 0, 0, // add x@gottpoff(%rip),%rax
    ];
    sec[start..start + 16].copy_from_slice(&SEQ);
    Some(start + 12)
}

/// LD → LE: `48 8d 3d <tlsld>` `e8 <plt32 __tls_get_addr>` (12 bytes) becomes
/// `66 66 66 64 48 8b 04 25 00 00 00 00` (`mov %fs:0,%rax` padded). Also handles the `-fno-plt`
/// form `48 8d 3d <tlsld>` `ff 15 <gotpcrelx>` (13 bytes).
pub fn relax_tls_ld_to_le(sec: &mut [u8], off: usize) -> bool {
    if off < 3 || sec.len() < off + 9 || sec[off - 3..off] != [0x48, 0x8d, 0x3d] {
        return false;
    }
    let start = off - 3;
    if sec[off + 4] == 0xe8 {
        sec[start..start + 12].copy_from_slice(&[0x66, 0x66, 0x66, 0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0]);
        true
    } else if sec.len() >= off + 10 && sec[off + 4] == 0xff && sec[off + 5] == 0x15 {
        sec[start..start + 13].copy_from_slice(&[0x66, 0x66, 0x66, 0x66, 0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0]);
        true
    } else {
        false
    }
}

/// IE → LE: `mov x@gottpoff(%rip), %reg` → `mov $tpoff, %reg`; `add x@gottpoff(%rip), %reg` →
/// `add $tpoff, %reg` (or `lea tpoff(%reg), %reg`). The field stays at `off` and receives the
/// TP offset.
pub fn relax_tls_ie_to_le(sec: &mut [u8], off: usize) -> bool {
    if off < 3 {
        return false;
    }
    let (rex_i, op_i, modrm_i) = (off - 3, off - 2, off - 1);
    let rex = sec[rex_i];
    let op = sec[op_i];
    let modrm = sec[modrm_i];
    if modrm & 0xc7 != 0x05 || (rex & 0xf0) != 0x40 {
        return false;
    }
    let reg = (modrm >> 3) & 7;
    // REX.R extends the ModRM reg field; after the rewrite the register is in r/m, so it moves to
    // REX.B.
    let new_rex = if rex & 0x04 != 0 { (rex & !0x04) | 0x01 } else { rex };
    match op {
        0x8b => {
            sec[rex_i] = new_rex;
            sec[op_i] = 0xc7;
            sec[modrm_i] = 0xc0 | reg;
            true
        }
        0x03 => {
            if reg == 4 {
                // add to %rsp or %r12: keep it an add with immediate (`lea tpoff(%rsp|%r12)`
                // needs a SIB byte, which does not fit).
                sec[rex_i] = new_rex;
                sec[op_i] = 0x81;
                sec[modrm_i] = 0xc0 | reg;
            } else {
                // lea tpoff(%reg), %reg
                let r = if rex & 0x04 != 0 { rex | 0x01 } else { rex };
                sec[rex_i] = r;
                sec[op_i] = 0x8d;
                sec[modrm_i] = 0x80 | (reg << 3) | reg;
            }
            true
        }
        _ => false,
    }
}

/// TLS descriptor → LE: `lea x@tlsdesc(%rip), %rax` → `mov $tpoff, %rax`; the call
/// `call *x@tlscall(%rax)` (`ff 10`) → `xchg %ax,%ax` (`66 90`).
pub fn relax_tlsdesc_to_le(sec: &mut [u8], off: usize) -> bool {
    if off < 3 || sec[off - 2] != 0x8d || sec[off - 1] & 0xc7 != 0x05 {
        return false;
    }
    let rex = sec[off - 3];
    let reg = (sec[off - 1] >> 3) & 7;
    let new_rex = if rex & 0x04 != 0 { (rex & !0x04) | 0x01 } else { rex };
    sec[off - 3] = new_rex;
    sec[off - 2] = 0xc7;
    sec[off - 1] = 0xc0 | reg;
    true
}

/// `lea x@tlsdesc(%rip), %rax` → `mov x@gottpoff(%rip), %rax` (descriptor → IE).
pub fn relax_tlsdesc_to_ie(sec: &mut [u8], off: usize) -> bool {
    if off < 3 || sec[off - 2] != 0x8d || sec[off - 1] & 0xc7 != 0x05 {
        return false;
    }
    sec[off - 2] = 0x8b;
    true
}

/// Rewrites the descriptor call at `off` (the TLSDESC_CALL relocation's offset, pointing at the
/// `ff 10` call) into a 2-byte nop.
pub fn relax_tlsdesc_call(sec: &mut [u8], off: usize) -> bool {
    if sec.len() < off + 2 || sec[off] != 0xff || sec[off + 1] != 0x10 {
        return false;
    }
    sec[off] = 0x66;
    sec[off + 1] = 0x90;
    true
}

// ---------------------------------------------------------------------------------------------
// PLT templates.
// ---------------------------------------------------------------------------------------------

pub const PLT_HEADER_SIZE: usize = 16;
pub const PLT_ENTRY_SIZE: usize = 16;
pub const IPLT_ENTRY_SIZE: usize = 16;
/// `int3` fills gaps in executable sections so a stray jump traps.
pub const TRAP: u8 = 0xcc;

/// The lazy-binding PLT header: `pushq GOTPLT+8(%rip); jmp *GOTPLT+16(%rip); nopl 0(%rax)`.
pub fn write_plt_header(buf: &mut [u8], plt_addr: u64, gotplt_addr: u64) {
    buf[..16].copy_from_slice(&[
        0xff, 0x35, 0, 0, 0, 0, // pushq GOTPLT+8(%rip)
        0xff, 0x25, 0, 0, 0, 0, // jmp *GOTPLT+16(%rip)
        0x0f, 0x1f, 0x40, 0x00, // nopl 0(%rax)
    ]);
    let push = (gotplt_addr + 8).wrapping_sub(plt_addr + 6) as u32;
    let jmp = (gotplt_addr + 16).wrapping_sub(plt_addr + 12) as u32;
    buf[2..6].copy_from_slice(&push.to_le_bytes());
    buf[8..12].copy_from_slice(&jmp.to_le_bytes());
}

/// A lazy PLT entry: `jmp *slot(%rip); pushq $index; jmp PLT0`.
pub fn write_plt_entry(buf: &mut [u8], entry_addr: u64, slot_addr: u64, index: u32, plt0: u64) {
    buf[..16].copy_from_slice(&[
        0xff, 0x25, 0, 0, 0, 0, // jmp *slot(%rip)
        0x68, 0, 0, 0, 0, // pushq $index
        0xe9, 0, 0, 0, 0, // jmp PLT0
    ]);
    let jmp = slot_addr.wrapping_sub(entry_addr + 6) as u32;
    buf[2..6].copy_from_slice(&jmp.to_le_bytes());
    buf[7..11].copy_from_slice(&index.to_le_bytes());
    let back = plt0.wrapping_sub(entry_addr + 16) as u32;
    buf[12..16].copy_from_slice(&back.to_le_bytes());
}

/// A non-lazy entry (IFUNC PLT, or `-z now` style): `jmp *slot(%rip)` padded with int3.
pub fn write_iplt_entry(buf: &mut [u8], entry_addr: u64, slot_addr: u64) {
    buf[..16].copy_from_slice(&[0xff, 0x25, 0, 0, 0, 0, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc]);
    let jmp = slot_addr.wrapping_sub(entry_addr + 6) as u32;
    buf[2..6].copy_from_slice(&jmp.to_le_bytes());
}

#[cfg(test)]
mod tests {

    #[test]
    fn implicit_addends_are_sign_extended() {
        assert_eq!(implicit_addend(r::R64, &(-5i64).to_le_bytes()), Some(-5));
        assert_eq!(implicit_addend(r::PC32, &(-4i32).to_le_bytes()), Some(-4));
        assert_eq!(implicit_addend(r::R32, &0xffff_fff0u32.to_le_bytes()), Some(-16));
        assert_eq!(implicit_addend(r::R16, &[0xfe, 0xff]), Some(-2));
        assert_eq!(implicit_addend(r::R8, &[0x7f]), Some(127));
        assert_eq!(implicit_addend(r::NONE, &[]), Some(0));
        assert_eq!(implicit_addend(r::R64, &[0; 4]), None);
    }
    use super::*;

    #[test]
    fn table_maps_common_types() {
        assert_eq!(rel_info(r::PLT32).kind, RelKind::PltPc);
        assert_eq!(rel_info(r::R64).field, Field::W64);
        assert_eq!(rel_info(r::R32).field, Field::U32);
        assert_eq!(rel_info(999).kind, RelKind::Unknown);
    }

    #[test]
    fn overflow_is_detected() {
        let mut b = [0u8; 8];
        assert!(write_field(&mut b, Field::I32, (-5i64) as u64));
        assert_eq!(read_field(&b, Field::I32), -5);
        assert!(!write_field(&mut b, Field::I32, 1 << 40));
        assert!(!write_field(&mut b, Field::U32, (-1i64) as u64));
        assert!(write_field(&mut b, Field::U32, 0xffff_ffff));
    }

    #[test]
    fn mov_gotpcrelx_becomes_lea() {
        // 48 8b 05 <disp32>: mov foo@GOTPCREL(%rip), %rax
        let mut c = [0x48, 0x8b, 0x05, 0, 0, 0, 0];
        assert_eq!(relax_gotpcrelx(&mut c, 3, true), Some(Relaxed::Pc));
        assert_eq!(c[..3], [0x48, 0x8d, 0x05]);
    }

    #[test]
    fn binop_and_test_gotpcrelx_become_immediates() {
        // subq foo@GOTPCREL(%rip), %r9 → subq $foo, %r9
        let mut c = [0x4c, 0x2b, 0x0d, 0, 0, 0, 0];
        assert_eq!(relax_gotpcrelx(&mut c, 3, true), Some(Relaxed::Abs));
        assert_eq!(c[..3], [0x49, 0x81, 0xe9]);
        // cmpq foo@GOTPCREL(%rip), %rax → cmpq $foo, %rax
        let mut c = [0x48, 0x3b, 0x05, 0, 0, 0, 0];
        assert_eq!(relax_gotpcrelx(&mut c, 3, true), Some(Relaxed::Abs));
        assert_eq!(c[..3], [0x48, 0x81, 0xf8]);
        // testq %r15, foo@GOTPCREL(%rip) → testq $foo, %r15
        let mut c = [0x4c, 0x85, 0x3d, 0, 0, 0, 0];
        assert_eq!(relax_gotpcrelx(&mut c, 3, true), Some(Relaxed::Abs));
        assert_eq!(c[..3], [0x49, 0xf7, 0xc7]);
        // Without REX (plain GOTPCRELX) lld keeps the GOT load.
        let mut c = [0x90, 0x2b, 0x05, 0, 0, 0, 0];
        assert_eq!(relax_gotpcrelx(&mut c, 3, false), None);
    }

    #[test]
    fn call_gotpcrelx_becomes_addr32_call() {
        let mut c = [0xff, 0x15, 0, 0, 0, 0];
        assert_eq!(relax_gotpcrelx(&mut c, 2, false), Some(Relaxed::Pc));
        assert_eq!(c[..2], [0x67, 0xe8]);
    }

    #[test]
    fn jmp_gotpcrelx_becomes_jmp_nop() {
        let mut c = [0xff, 0x25, 0, 0, 0, 0];
        assert_eq!(relax_gotpcrelx(&mut c, 2, false), Some(Relaxed::Jmp));
        // target 0x100 bytes after the original field: S + A - P = 0x100 - 4
        write_relaxed_jmp(&mut c, 2, 0x100 - 4);
        assert_eq!(c, [0xe9, 0xfd, 0x00, 0x00, 0x00, 0x90]);
    }

    #[test]
    fn gd_to_le() {
        let mut c = vec![0x66, 0x48, 0x8d, 0x3d, 0, 0, 0, 0, 0x66, 0x66, 0x48, 0xe8, 0, 0, 0, 0];
        assert_eq!(relax_tls_gd_to_le(&mut c, 4), Some(12));
        assert_eq!(c[..5], [0x64, 0x48, 0x8b, 0x04, 0x25]);
        assert_eq!(c[9..12], [0x48, 0x8d, 0x80]);
    }

    #[test]
    fn ie_to_le_moves_rex_r_to_rex_b() {
        // 4c 8b 25 <disp>: mov x@gottpoff(%rip), %r12
        let mut c = [0x4c, 0x8b, 0x25, 0, 0, 0, 0];
        assert!(relax_tls_ie_to_le(&mut c, 3));
        assert_eq!(c[..3], [0x49, 0xc7, 0xc4]);
    }

    #[test]
    fn ie_to_le_add_to_r12_and_rsp_stays_add() {
        // 4c 03 25 <disp>: add x@gottpoff(%rip), %r12 -> 49 81 c4: add $tpoff, %r12 (as lld)
        let mut c = [0x4c, 0x03, 0x25, 0, 0, 0, 0];
        assert!(relax_tls_ie_to_le(&mut c, 3));
        assert_eq!(c[..3], [0x49, 0x81, 0xc4]);
        let mut c = [0x48, 0x03, 0x25, 0, 0, 0, 0];
        assert!(relax_tls_ie_to_le(&mut c, 3));
        assert_eq!(c[..3], [0x48, 0x81, 0xc4]);
        // 4c 03 2d: add ..., %r13 -> 4d 8d ad: lea tpoff(%r13), %r13
        let mut c = [0x4c, 0x03, 0x2d, 0, 0, 0, 0];
        assert!(relax_tls_ie_to_le(&mut c, 3));
        assert_eq!(c[..3], [0x4d, 0x8d, 0xad]);
    }

    #[test]
    fn ld_to_le() {
        let mut c = [0x48, 0x8d, 0x3d, 0, 0, 0, 0, 0xe8, 0, 0, 0, 0];
        assert!(relax_tls_ld_to_le(&mut c, 3));
        assert_eq!(c[3..8], [0x64, 0x48, 0x8b, 0x04, 0x25]);
    }

    #[test]
    fn plt_entry_encodes_displacements() {
        let mut b = [0u8; 16];
        write_plt_entry(&mut b, 0x1010, 0x3018, 0, 0x1000);
        assert_eq!(u32::from_le_bytes(b[2..6].try_into().unwrap()), 0x3018 - 0x1016);
        assert_eq!(i32::from_le_bytes(b[12..16].try_into().unwrap()), -0x20);
    }
}
