//! A reader for LLVM's generic bitstream container, the encoding under every bitcode file.
//!
//! dtld resolves bitcode symbols without loading LLVM, so it has to find its way through the
//! bitstream itself: fixed-width and VBR fields, nested length-prefixed blocks, abbreviation
//! definitions (local ones and those inherited from a BLOCKINFO block) and records with array,
//! char6 and blob operands. The format is documented in LLVM's "LLVM Bitcode File Format".
//!
//! Everything here reads untrusted bytes: every read is bounds-checked, every length is checked
//! against the bytes that remain before anything is allocated for it, and every loop consumes
//! input, so bad input yields an `Err(String)` and never a panic or a hang. Errors use LLVM's
//! wording.

use std::collections::HashMap;
use std::sync::Arc;

/// Abbreviation id of END_BLOCK.
pub const END_BLOCK: u32 = 0;
/// Abbreviation id of ENTER_SUBBLOCK.
pub const ENTER_SUBBLOCK: u32 = 1;
/// Abbreviation id of DEFINE_ABBREV.
pub const DEFINE_ABBREV: u32 = 2;
/// Abbreviation id of UNABBREV_RECORD.
pub const UNABBREV_RECORD: u32 = 3;
/// The first abbreviation id an application (or BLOCKINFO) abbreviation gets.
pub const FIRST_APPLICATION_ABBREV: u32 = 4;

/// Block id of the BLOCKINFO block.
pub const BLOCKINFO_BLOCK_ID: u32 = 0;
/// BLOCKINFO record that selects the block the following abbreviations apply to.
const BLOCKINFO_CODE_SETBID: u32 = 1;

/// Widest fixed or VBR chunk an abbreviation may use (LLVM's `MaxChunkSize`).
const MAX_CHUNK_SIZE: u64 = 32;

/// The message for reads past the end of the bytes (or past the end of the current block).
const TRUNCATED: &str = "truncated bitcode file";

/// A position in a little-endian bit sequence (bit 0 is the least significant bit of byte 0).
#[derive(Clone, Debug)]
pub struct BitCursor<'a> {
    data: &'a [u8],
    /// Current position, in bits from the start of `data`.
    pos: u64,
    /// Reads may not go past this bit (the end of the data or of the enclosing block).
    limit: u64,
}

impl<'a> BitCursor<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        BitCursor { data, pos: 0, limit: data.len() as u64 * 8 }
    }

    /// The current position in bits.
    pub fn bit_pos(&self) -> u64 {
        self.pos
    }

    /// Bits left before the limit.
    pub fn remaining(&self) -> u64 {
        self.limit.saturating_sub(self.pos)
    }

    /// True when no bits are left before the limit.
    pub fn at_end(&self) -> bool {
        self.pos >= self.limit
    }

    /// Moves to `bit`, which may be at most the limit.
    pub fn jump_to_bit(&mut self, bit: u64) -> Result<(), String> {
        if bit > self.limit {
            return Err(TRUNCATED.into());
        }
        self.pos = bit;
        Ok(())
    }

    /// Reads `n` (at most 64) bits as an unsigned number.
    #[inline]
    pub fn read(&mut self, n: u32) -> Result<u64, String> {
        if n > 64 {
            return Err(format!("can't read more than 64 bits at a time, trying to read {n}"));
        }
        if n == 0 {
            return Ok(0);
        }
        if self.remaining() < n as u64 {
            return Err(TRUNCATED.into());
        }
        if n <= 32 {
            let v = self.peek_le(self.pos, n);
            self.pos += n as u64;
            return Ok(v);
        }
        let lo = self.peek_le(self.pos, 32);
        let hi = self.peek_le(self.pos + 32, n - 32);
        self.pos += n as u64;
        Ok(lo | hi << 32)
    }

    /// Reads `n` <= 32 bits at `pos`, which the caller has checked to lie inside `data`.
    #[inline]
    fn peek_le(&self, pos: u64, n: u32) -> u64 {
        let byte = (pos / 8) as usize;
        let shift = (pos % 8) as u32;
        // Away from the end: one unaligned 8-byte load (a bitcode file is read a few bits at
        // a time, so this is the symbol-table scan's inner loop).
        if let Some(b) = self.data.get(byte..byte + 8) {
            let word = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
            return (word >> shift) & ((1u64 << n) - 1);
        }
        // `n + shift` <= 39 bits: at most 5 bytes; those past the end read as zero.
        let mut word = 0u64;
        for i in 0..5 {
            if let Some(&b) = self.data.get(byte + i) {
                word |= (b as u64) << (8 * i);
            }
        }
        (word >> shift) & ((1u64 << n) - 1)
    }

    /// Skips `n` VBR6 values (an unabbreviated record's operands), as `n` calls of
    /// `read_vbr64(6)` would, with the same errors (`TRUNCATED` at the limit, "Unterminated
    /// VBR" for a value of more than 64 bits), but up to nine chunks per load: walking a module
    /// block's top-level records (one per global) for its summary flags was the largest part of
    /// resolving OpenSSL's bitcode.
    pub fn skip_vbr6(&mut self, n: u32) -> Result<(), String> {
        let mut left = n;
        // Continuation chunks of the value under way (the 13th one makes it too long).
        let mut run = 0u32;
        // One chunk read: counts a value that ends there, or fails on a value too long.
        fn chunk(c: u64, left: &mut u32, run: &mut u32) -> Result<(), String> {
            if c & 32 == 0 {
                *run = 0;
                *left -= 1;
                return Ok(());
            }
            *run += 1;
            if *run >= 13 {
                return Err("Unterminated VBR".into());
            }
            Ok(())
        }
        while left > 0 {
            let byte = (self.pos / 8) as usize;
            let chunks = (self.remaining() / 6).min(9) as u32;
            let Some(b) = self.data.get(byte..byte + 8).filter(|_| chunks > 0) else {
                // The last bytes, or the limit: one chunk the careful way.
                chunk(self.read(6)?, &mut left, &mut run)?;
                continue;
            };
            // 64 - (pos % 8) >= 57 valid bits: nine 6-bit chunks.
            let mut w = u64::from_le_bytes(b.try_into().unwrap_or([0; 8])) >> (self.pos % 8);
            for _ in 0..chunks {
                self.pos += 6;
                chunk(w, &mut left, &mut run)?;
                if left == 0 {
                    break;
                }
                w >>= 6;
            }
        }
        Ok(())
    }

    /// Reads a VBR value with `n`-bit chunks that must fit in 32 bits.
    pub fn read_vbr(&mut self, n: u32) -> Result<u32, String> {
        let v = self.read_vbr_bits(n, 32)?;
        Ok(v as u32)
    }

    /// Reads a VBR value with `n`-bit chunks that must fit in 64 bits.
    pub fn read_vbr64(&mut self, n: u32) -> Result<u64, String> {
        self.read_vbr_bits(n, 64)
    }

    #[inline]
    fn read_vbr_bits(&mut self, n: u32, max_bits: u32) -> Result<u64, String> {
        if n == 0 || n > 32 {
            return Err(format!("Invalid VBR width {n}"));
        }
        let hi_bit = 1u64 << (n - 1);
        let mut piece = self.read(n)?;
        if piece & hi_bit == 0 {
            return Ok(piece);
        }
        let mut result = 0u64;
        let mut shift = 0u32;
        loop {
            // Every iteration consumes `n` >= 1 bits, so the loop ends at the limit at the latest.
            if shift < 64 {
                result |= (piece & (hi_bit - 1)) << shift;
            }
            if piece & hi_bit == 0 {
                return Ok(result);
            }
            shift += n - 1;
            if shift >= max_bits {
                return Err("Unterminated VBR".into());
            }
            piece = self.read(n)?;
        }
    }

    /// Moves to the next multiple of 32 bits (a no-op when already aligned).
    pub fn align32(&mut self) {
        self.pos = self.pos.div_ceil(32) * 32;
    }
}

/// How one operand of an abbreviated record is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbbrevOp {
    /// A constant that takes no bits in the record.
    Literal(u64),
    /// A fixed-width field of 1 to 32 bits.
    Fixed(u32),
    /// A VBR field with chunks of 1 to 32 bits.
    Vbr(u32),
    /// A vbr6 count followed by that many elements encoded as the next (last) operand.
    Array,
    /// A 6-bit character from `[a-zA-Z0-9._]`.
    Char6,
    /// A vbr6 byte count, 32-bit alignment, the bytes, and padding to 32 bits.
    Blob,
}

/// One step of skipping a record: the operands that take bits, so that skipping costs time
/// proportional to the bits skipped however many literals the abbreviation has.
#[derive(Clone, Copy, Debug)]
enum SkipOp {
    Scalar(AbbrevOp),
    /// An array; `well_formed` is false unless it is the second to last operand.
    Array {
        elt: AbbrevOp,
        well_formed: bool,
    },
    Blob,
}

/// An abbreviation: the encodings of a record's code and operands.
#[derive(Clone, Debug)]
pub struct Abbrev {
    ops: Vec<AbbrevOp>,
    skip: Vec<SkipOp>,
}

impl Abbrev {
    fn new(ops: Vec<AbbrevOp>) -> Abbrev {
        let mut skip = Vec::new();
        let mut i = 1;
        while i < ops.len() {
            match ops[i] {
                AbbrevOp::Literal(_) => {}
                AbbrevOp::Array => {
                    let elt = ops.get(i + 1).copied().unwrap_or(AbbrevOp::Literal(0));
                    skip.push(SkipOp::Array { elt, well_formed: i + 2 == ops.len() });
                    i += 1;
                }
                AbbrevOp::Blob => skip.push(SkipOp::Blob),
                op => skip.push(SkipOp::Scalar(op)),
            }
            i += 1;
        }
        Abbrev { ops, skip }
    }
}

/// A record: its code, its operands, and its blob operand if the abbreviation has one.
#[derive(Clone, Debug, Default)]
pub struct Record<'a> {
    pub code: u32,
    pub ops: Vec<u64>,
    pub blob: Option<&'a [u8]>,
}

/// What `BitstreamCursor::advance` found next in the current block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// The end of the current block (its scope has been popped).
    EndBlock,
    /// The start of a sub-block with this id: call `enter_block` or `skip_block` next.
    SubBlock(u32),
    /// A record with this abbreviation id: call `read_record` or `skip_record` next.
    Record(u32),
}

/// A shared, copy-on-write list of abbreviations.
type AbbrevList = Arc<Vec<Arc<Abbrev>>>;

/// Abbreviations defined in BLOCKINFO blocks, per block id.
#[derive(Clone, Debug, Default)]
pub struct BlockInfo {
    blocks: HashMap<u32, AbbrevList>,
}

impl BlockInfo {
    fn shared(&self, block_id: u32) -> AbbrevList {
        self.blocks.get(&block_id).cloned().unwrap_or_default()
    }

    fn add(&mut self, block_id: u32, abbrev: Abbrev) {
        Arc::make_mut(self.blocks.entry(block_id).or_default()).push(Arc::new(abbrev));
    }
}

/// The abbreviations of the current block: those inherited from BLOCKINFO (shared, so that
/// entering a block costs O(1)) followed by those the block defines itself.
#[derive(Clone, Debug, Default)]
struct Abbrevs {
    inherited: AbbrevList,
    local: Vec<Arc<Abbrev>>,
}

impl Abbrevs {
    fn get(&self, i: usize) -> Option<&Arc<Abbrev>> {
        match i.checked_sub(self.inherited.len()) {
            None => self.inherited.get(i),
            Some(j) => self.local.get(j),
        }
    }
}

/// The state of an enclosing block, restored at its END_BLOCK.
#[derive(Clone, Debug)]
struct Scope {
    code_width: u32,
    abbrevs: Abbrevs,
    limit: u64,
}

/// A cursor over a bitstream that tracks block nesting, abbreviation width and abbreviations.
///
/// At the top level abbreviation ids are 2 bits wide and there are no abbreviations. Blocks are
/// length-prefixed, so each is confined to its declared extent: reads inside a block never go
/// past its end, and a block never extends past its parent.
///
/// All work is linear in the input: skipping a record costs the bits it takes, and the literal
/// operands `read_record` materializes (which take no bits) are limited to 64 per input byte.
#[derive(Clone, Debug)]
pub struct BitstreamCursor<'a> {
    bits: BitCursor<'a>,
    code_width: u32,
    abbrevs: Abbrevs,
    scopes: Vec<Scope>,
    block_info: BlockInfo,
    literal_budget: u64,
}

impl<'a> BitstreamCursor<'a> {
    /// A cursor at the start of `data`, at the top level. (The caller skips the magic number.)
    pub fn new(data: &'a [u8]) -> Self {
        BitstreamCursor {
            bits: BitCursor::new(data),
            code_width: 2,
            abbrevs: Abbrevs::default(),
            scopes: Vec::new(),
            block_info: BlockInfo::default(),
            literal_budget: data.len() as u64 * 64 + 4096,
        }
    }

    pub fn bit_pos(&self) -> u64 {
        self.bits.bit_pos()
    }

    /// The byte containing the current bit.
    pub fn byte_pos(&self) -> u64 {
        self.bits.bit_pos() / 8
    }

    /// The current block's abbreviation width and the bit where its contents end (after its
    /// END_BLOCK and alignment).
    pub fn block_extent(&self) -> (u32, u64) {
        (self.code_width, self.bits.limit)
    }

    /// Moves within the current block (or top level).
    pub fn jump_to_bit(&mut self, bit: u64) -> Result<(), String> {
        self.bits.jump_to_bit(bit)
    }

    #[cfg(test)]
    /// True at the end of the current block's extent (or of the data at the top level).
    pub fn at_end(&self) -> bool {
        self.bits.at_end()
    }

    #[cfg(test)]
    /// How many blocks enclose the current position.
    pub fn depth(&self) -> usize {
        self.scopes.len()
    }

    /// Pops the current block's scope after its END_BLOCK.
    fn end_block(&mut self) -> Result<(), String> {
        let Some(scope) = self.scopes.pop() else {
            return Err("Malformed block".into());
        };
        self.bits.align32();
        self.code_width = scope.code_width;
        self.abbrevs = scope.abbrevs;
        self.bits.limit = scope.limit;
        Ok(())
    }

    /// The next entry of the current block. DEFINE_ABBREV records are consumed and installed as
    /// abbreviations of the current block; running out of data is an error ("Malformed block").
    pub fn advance(&mut self) -> Result<Entry, String> {
        loop {
            if self.bits.at_end() {
                return Err("Malformed block".into());
            }
            let code = self.bits.read(self.code_width)? as u32;
            match code {
                END_BLOCK => {
                    self.end_block()?;
                    return Ok(Entry::EndBlock);
                }
                ENTER_SUBBLOCK => {
                    let id = self.bits.read_vbr(8)?;
                    return Ok(Entry::SubBlock(id));
                }
                DEFINE_ABBREV => {
                    let abbrev = self.read_abbrev()?;
                    self.abbrevs.local.push(Arc::new(abbrev));
                }
                _ => return Ok(Entry::Record(code)),
            }
        }
    }

    /// Reads a sub-block header (after `Entry::SubBlock`): abbreviation width, alignment and
    /// length in 32-bit words. Returns the width and the bit where the block's contents end.
    fn read_block_header(&mut self) -> Result<(u32, u64), String> {
        let width = self.bits.read_vbr(4)?;
        self.bits.align32();
        let words = self.bits.read(32)?;
        let end = self.bits.bit_pos() + words * 32;
        if end > self.bits.limit {
            return Err("Malformed block".into());
        }
        Ok((width, end))
    }

    /// Enters the sub-block `block_id` whose ENTER_SUBBLOCK and id `advance` just read. The block
    /// starts with the BLOCKINFO abbreviations for `block_id`.
    pub fn enter_block(&mut self, block_id: u32) -> Result<(), String> {
        let (width, end) = self.read_block_header()?;
        if width == 0 || width as u64 > MAX_CHUNK_SIZE {
            return Err(format!("Invalid abbreviation width {width} in block {block_id}"));
        }
        if self.bits.at_end() {
            return Err("can't enter sub block: already at end of stream".into());
        }
        let inherited = Abbrevs { inherited: self.block_info.shared(block_id), local: Vec::new() };
        let abbrevs = std::mem::replace(&mut self.abbrevs, inherited);
        self.scopes.push(Scope { code_width: self.code_width, abbrevs, limit: self.bits.limit });
        self.code_width = width;
        self.bits.limit = end;
        Ok(())
    }

    /// Skips the sub-block whose ENTER_SUBBLOCK and id `advance` just read, in O(1).
    pub fn skip_block(&mut self) -> Result<(), String> {
        let (_, end) = self.read_block_header()?;
        self.bits.jump_to_bit(end)
    }

    /// Reads a DEFINE_ABBREV body.
    fn read_abbrev(&mut self) -> Result<Abbrev, String> {
        let n = self.bits.read_vbr(5)?;
        // Every operand takes at least two bits; don't trust `n` for the allocation.
        let mut ops = Vec::with_capacity((n as u64).min(self.bits.remaining() / 2) as usize);
        for _ in 0..n {
            let literal = self.bits.read(1)? != 0;
            if literal {
                ops.push(AbbrevOp::Literal(self.bits.read_vbr64(8)?));
                continue;
            }
            let op = match self.bits.read(3)? {
                e @ (1 | 2) => {
                    let width = self.bits.read_vbr64(5)?;
                    if width == 0 {
                        // Fixed(0) and VBR(0) read as a literal zero, as in LLVM.
                        AbbrevOp::Literal(0)
                    } else if width > MAX_CHUNK_SIZE {
                        return Err("Fixed or VBR abbrev record with size > MaxChunkData".into());
                    } else if e == 1 {
                        AbbrevOp::Fixed(width as u32)
                    } else {
                        AbbrevOp::Vbr(width as u32)
                    }
                }
                3 => AbbrevOp::Array,
                4 => AbbrevOp::Char6,
                5 => AbbrevOp::Blob,
                _ => return Err("Invalid encoding".into()),
            };
            ops.push(op);
        }
        if ops.is_empty() {
            return Err("Abbrev record with no operands".into());
        }
        Ok(Abbrev::new(ops))
    }

    fn abbrev(&self, abbrev_id: u32) -> Result<Arc<Abbrev>, String> {
        abbrev_id.checked_sub(FIRST_APPLICATION_ABBREV).and_then(|i| self.abbrevs.get(i as usize)).cloned().ok_or_else(|| "Invalid abbrev number".to_string())
    }

    /// Reads one scalar (fixed, VBR or char6) operand.
    fn read_scalar(&mut self, op: AbbrevOp) -> Result<u64, String> {
        match op {
            AbbrevOp::Literal(v) => Ok(v),
            AbbrevOp::Fixed(w) => self.bits.read(w),
            AbbrevOp::Vbr(w) => self.bits.read_vbr64(w),
            AbbrevOp::Char6 => Ok(decode_char6(self.bits.read(6)? as u8) as u64),
            AbbrevOp::Array | AbbrevOp::Blob => Err("Invalid record".into()),
        }
    }

    /// Reads the record whose abbreviation id `advance` just returned.
    pub fn read_record(&mut self, abbrev_id: u32) -> Result<Record<'a>, String> {
        self.record(abbrev_id, true)
    }

    /// Skips the record whose abbreviation id `advance` just returned, returning its code.
    /// Costs time proportional to the bits skipped, not to the number of operands.
    pub fn skip_record(&mut self, abbrev_id: u32) -> Result<u32, String> {
        Ok(self.record(abbrev_id, false)?.code)
    }

    /// Like `skip_record`, but also returns the record's blob operand, if it has one.
    pub fn read_record_blob(&mut self, abbrev_id: u32) -> Result<(u32, Option<&'a [u8]>), String> {
        let rec = self.record(abbrev_id, false)?;
        Ok((rec.code, rec.blob))
    }

    fn record(&mut self, abbrev_id: u32, keep: bool) -> Result<Record<'a>, String> {
        let mut rec = Record::default();
        if abbrev_id == UNABBREV_RECORD {
            rec.code = self.bits.read_vbr(6)?;
            let n = self.bits.read_vbr(6)?;
            // Every operand takes at least 6 bits.
            if n as u64 > self.bits.remaining() / 6 {
                return Err(TRUNCATED.into());
            }
            if !keep {
                self.bits.skip_vbr6(n)?;
                return Ok(rec);
            }
            rec.ops.reserve(n as usize);
            for _ in 0..n {
                let v = self.bits.read_vbr64(6)?;
                rec.ops.push(v);
            }
            return Ok(rec);
        }

        let abbrev = self.abbrev(abbrev_id)?;
        rec.code = match abbrev.ops[0] {
            AbbrevOp::Array | AbbrevOp::Blob => return Err("Abbreviation starts with an Array or a Blob".into()),
            op => self.read_scalar(op)? as u32,
        };
        if keep {
            let ops = &abbrev.ops;
            let mut i = 1;
            while i < ops.len() {
                match ops[i] {
                    AbbrevOp::Literal(v) => {
                        if self.literal_budget == 0 {
                            return Err("Invalid record: too many literal operands".into());
                        }
                        self.literal_budget -= 1;
                        rec.ops.push(v);
                    }
                    AbbrevOp::Array => {
                        let elt = ops.get(i + 1).copied().unwrap_or(AbbrevOp::Literal(0));
                        self.array(elt, i + 2 == ops.len(), Some(&mut rec.ops))?;
                        i += 1;
                    }
                    AbbrevOp::Blob => rec.blob = Some(self.blob()?),
                    op => {
                        let v = self.read_scalar(op)?;
                        rec.ops.push(v);
                    }
                }
                i += 1;
            }
        } else {
            for op in &abbrev.skip {
                match *op {
                    SkipOp::Scalar(op) => {
                        self.read_scalar(op)?;
                    }
                    SkipOp::Array { elt, well_formed } => self.array(elt, well_formed, None)?,
                    SkipOp::Blob => rec.blob = Some(self.blob()?),
                }
            }
        }
        Ok(rec)
    }

    /// Reads (into `out`) or skips an array operand whose elements are encoded as `elt`.
    fn array(&mut self, elt: AbbrevOp, well_formed: bool, out: Option<&mut Vec<u64>>) -> Result<(), String> {
        let n = self.bits.read_vbr(6)? as u64;
        if !well_formed {
            return Err("Array op not second to last".into());
        }
        let elt_bits = match elt {
            AbbrevOp::Fixed(w) | AbbrevOp::Vbr(w) => w as u64,
            AbbrevOp::Char6 => 6,
            AbbrevOp::Literal(_) => return Err("Array element type has to be an encoding of a type".into()),
            AbbrevOp::Array | AbbrevOp::Blob => return Err("Array element type can't be an Array or a Blob".into()),
        };
        // Elements take at least `elt_bits` bits each (VBR: at least one chunk).
        if n > self.bits.remaining() / elt_bits {
            return Err(TRUNCATED.into());
        }
        match out {
            None if !matches!(elt, AbbrevOp::Vbr(_)) => {
                let end = self.bits.bit_pos() + n * elt_bits;
                self.bits.jump_to_bit(end)
            }
            None => {
                for _ in 0..n {
                    self.read_scalar(elt)?;
                }
                Ok(())
            }
            Some(out) => {
                out.reserve(n as usize);
                for _ in 0..n {
                    out.push(self.read_scalar(elt)?);
                }
                Ok(())
            }
        }
    }

    /// Reads a blob operand: vbr6 length, alignment to 32 bits, bytes, padding to 32 bits.
    fn blob(&mut self) -> Result<&'a [u8], String> {
        let n = self.bits.read_vbr(6)? as u64;
        self.bits.align32();
        let start = self.bits.bit_pos();
        let end = start + n.div_ceil(4) * 32;
        if end > self.bits.limit {
            return Err("Blob ends too soon".into());
        }
        let first = (start / 8) as usize;
        let blob = self.bits.data.get(first..first + n as usize).ok_or_else(|| "Blob ends too soon".to_string())?;
        self.bits.jump_to_bit(end)?;
        Ok(blob)
    }

    /// Reads a BLOCKINFO block whose ENTER_SUBBLOCK and id `advance` just read, adding its
    /// abbreviations to this cursor's block info (they apply to blocks entered afterwards).
    pub fn read_blockinfo_block(&mut self) -> Result<(), String> {
        self.enter_block(BLOCKINFO_BLOCK_ID)?;
        let mut current: Option<u32> = None;
        loop {
            if self.bits.at_end() {
                return Err("Malformed block".into());
            }
            let code = self.bits.read(self.code_width)? as u32;
            match code {
                END_BLOCK => return self.end_block(),
                ENTER_SUBBLOCK => {
                    self.bits.read_vbr(8)?;
                    self.skip_block()?;
                }
                DEFINE_ABBREV => {
                    // In BLOCKINFO, abbreviations belong to the block chosen by SETBID.
                    let Some(id) = current else {
                        return Err("Invalid record: abbreviation before SETBID in BLOCKINFO".into());
                    };
                    let abbrev = self.read_abbrev()?;
                    self.block_info.add(id, abbrev);
                }
                _ => {
                    let at = self.bits.bit_pos();
                    if self.skip_record(code)? == BLOCKINFO_CODE_SETBID {
                        self.bits.jump_to_bit(at)?;
                        let rec = self.read_record(code)?;
                        let Some(&id) = rec.ops.first() else {
                            return Err("Invalid record".into());
                        };
                        current = Some(id as u32);
                    }
                }
            }
        }
    }
}

/// Decodes a char6 value: `[a-z]`, `[A-Z]`, `[0-9]`, `.`, `_`.
pub fn decode_char6(v: u8) -> u8 {
    match v & 63 {
        v @ 0..=25 => b'a' + v,
        v @ 26..=51 => b'A' + (v - 26),
        v @ 52..=61 => b'0' + (v - 52),
        62 => b'.',
        _ => b'_',
    }
}

/// A writer of the same container, fields least significant bit first as LLVM's
/// `BitstreamWriter` writes them: for the little bitcode dtld makes itself (the skip-module
/// index, `skipindex.rs`; a shard's renamed module table, `shardpaths.rs`) and for this
/// reader's tests.
#[derive(Default, Clone)]
pub struct BitWriter {
    out: Vec<u8>,
    cur: u64,
    bits: u32,
}

impl BitWriter {
    /// Writes the low `width` bits of `value` (`width` up to 64).
    pub fn emit(&mut self, value: u64, width: u32) {
        if width > 32 {
            self.emit(value & 0xffff_ffff, 32);
            self.emit(value >> 32, width - 32);
            return;
        }
        self.cur |= (value & ((1u64 << width) - 1)) << self.bits;
        self.bits += width;
        while self.bits >= 8 {
            self.out.push(self.cur as u8);
            self.cur >>= 8;
            self.bits -= 8;
        }
    }

    /// Writes `value` as a VBR field of `width`-bit chunks.
    pub fn vbr(&mut self, mut value: u64, width: u32) {
        let hi = 1u64 << (width - 1);
        while value >= hi {
            self.emit((value & (hi - 1)) | hi, width);
            value >>= width - 1;
        }
        self.emit(value, width);
    }

    /// Pads with zero bits to the next 32-bit word.
    pub fn align32(&mut self) {
        if self.bits > 0 {
            self.emit(0, 8 - self.bits);
        }
        while !self.out.len().is_multiple_of(4) {
            self.out.push(0);
        }
    }

    /// Bytes written whole (the magic number): the writer is at a byte boundary.
    pub fn bytes(&mut self, b: &[u8]) {
        debug_assert_eq!(self.bits, 0);
        self.out.extend_from_slice(b);
    }

    /// ENTER_SUBBLOCK `block_id` with abbreviation width `new_width`, in a block whose width is
    /// `abbrev_width`; returns where its length word is, for `end`.
    pub fn enter(&mut self, abbrev_width: u32, block_id: u64, new_width: u32) -> usize {
        self.emit(u64::from(ENTER_SUBBLOCK), abbrev_width);
        self.vbr(block_id, 8);
        self.vbr(u64::from(new_width), 4);
        self.align32();
        let at = self.out.len();
        self.out.extend_from_slice(&[0; 4]);
        at
    }

    /// END_BLOCK of the block `enter` opened (its width `abbrev_width`), its length patched.
    pub fn end(&mut self, abbrev_width: u32, len_at: usize) {
        self.emit(u64::from(END_BLOCK), abbrev_width);
        self.align32();
        let words = ((self.out.len() - len_at - 4) / 4) as u32;
        self.out[len_at..len_at + 4].copy_from_slice(&words.to_le_bytes());
    }

    /// An unabbreviated record.
    pub fn record(&mut self, abbrev_width: u32, code: u64, ops: &[u64]) {
        self.emit(u64::from(UNABBREV_RECORD), abbrev_width);
        self.vbr(code, 6);
        self.vbr(ops.len() as u64, 6);
        for &op in ops {
            self.vbr(op, 6);
        }
    }

    /// The bytes, a partial last byte padded with zero bits.
    pub fn finish(mut self) -> Vec<u8> {
        if self.bits > 0 {
            self.emit(0, 8 - self.bits);
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_and_vbr_reads() {
        let mut w = BitWriter::default();
        w.emit(5, 3);
        w.vbr(1_000_000, 6);
        w.emit(0xdead_beef_1234, 48);
        w.vbr(u64::MAX, 8);
        let data = w.finish();
        let mut c = BitCursor::new(&data);
        assert_eq!(c.read(3).unwrap(), 5);
        assert_eq!(c.read_vbr(6).unwrap(), 1_000_000);
        assert_eq!(c.read(48).unwrap(), 0xdead_beef_1234);
        assert_eq!(c.read_vbr64(8).unwrap(), u64::MAX);
        assert!(c.remaining() < 8);
        assert_eq!(c.read(8).unwrap_err(), TRUNCATED);
    }

    #[test]
    fn vbr_overflow_is_an_error() {
        let mut w = BitWriter::default();
        w.vbr(1u64 << 40, 6);
        let data = w.finish();
        let mut c = BitCursor::new(&data);
        assert_eq!(c.read_vbr(6).unwrap_err(), "Unterminated VBR");
        // All continuation bits set and no end: truncated, not a hang.
        let ones = [0xffu8; 64];
        let mut c = BitCursor::new(&ones);
        assert!(c.read_vbr64(2).is_err());
    }

    #[test]
    fn truncated_reads() {
        let mut c = BitCursor::new(&[0xff]);
        assert_eq!(c.read(9).unwrap_err(), TRUNCATED);
        assert_eq!(c.read(8).unwrap(), 0xff);
        assert!(c.at_end());
    }

    /// A block with a BLOCKINFO-defined abbreviation, a local one, an array of char6 and a blob.
    #[test]
    fn blocks_abbrevs_and_blobs() {
        let mut w = BitWriter::default();
        // BLOCKINFO: SETBID 9; abbrev [literal 7, array, char6].
        let len_at = w.enter(2, 0, 3);
        w.record(3, BLOCKINFO_CODE_SETBID as u64, &[9]);
        w.emit(DEFINE_ABBREV as u64, 3);
        w.vbr(3, 5);
        w.emit(1, 1);
        w.vbr(7, 8);
        w.emit(0, 1);
        w.emit(3, 3);
        w.emit(0, 1);
        w.emit(4, 3);
        w.end(3, len_at);

        // Block 9 with a local abbrev [fixed 4 (code), blob].
        let len_at = w.enter(2, 9, 4);
        w.emit(DEFINE_ABBREV as u64, 4);
        w.vbr(2, 5);
        w.emit(0, 1);
        w.emit(1, 3);
        w.vbr(4, 5);
        w.emit(0, 1);
        w.emit(5, 3);
        // Record with inherited abbrev 4: "ab_" as char6.
        w.emit(4, 4);
        w.vbr(3, 6);
        for c in [0u64, 1, 63] {
            w.emit(c, 6);
        }
        // Record with local abbrev 5: code 3, blob "hello".
        w.emit(5, 4);
        w.emit(3, 4);
        w.vbr(5, 6);
        w.align32();
        for b in b"hello\0\0\0" {
            w.emit(*b as u64, 8);
        }
        // Unabbreviated record code 2 [10, 20].
        w.record(4, 2, &[10, 20]);
        w.end(4, len_at);

        let data = w.finish();
        let mut c = BitstreamCursor::new(&data);
        assert_eq!(c.advance().unwrap(), Entry::SubBlock(0));
        c.read_blockinfo_block().unwrap();
        assert_eq!(c.depth(), 0);
        assert_eq!(c.advance().unwrap(), Entry::SubBlock(9));
        let save = c.clone();
        c.enter_block(9).unwrap();
        let Entry::Record(id) = c.advance().unwrap() else { panic!() };
        let r = c.read_record(id).unwrap();
        assert_eq!((r.code, r.ops.as_slice()), (7, &[b'a' as u64, b'b' as u64, b'_' as u64][..]));
        let Entry::Record(id) = c.advance().unwrap() else { panic!() };
        let r = c.read_record(id).unwrap();
        assert_eq!((r.code, r.blob), (3, Some(&b"hello"[..])));
        let Entry::Record(id) = c.advance().unwrap() else { panic!() };
        let r = c.read_record(id).unwrap();
        assert_eq!((r.code, r.ops.as_slice()), (2, &[10u64, 20][..]));
        assert_eq!(c.advance().unwrap(), Entry::EndBlock);
        assert!(c.at_end());
        let end = c.bit_pos();

        let mut s = save;
        s.skip_block().unwrap();
        assert_eq!(s.bit_pos(), end);

        // Running out of data at the top level is malformed.
        assert!(c.advance().is_err());
        // Every truncation fails cleanly.
        for len in 0..data.len() {
            let mut c = BitstreamCursor::new(&data[..len]);
            let _ = walk(&mut c);
        }
    }

    /// Abbreviations with huge numbers of literal operands cost nothing to skip, and reading
    /// them runs into the literal budget instead of taking quadratic time.
    #[test]
    fn literal_heavy_abbrevs_stay_linear() {
        let mut w = BitWriter::default();
        let len_at = w.enter(2, 9, 3);
        w.emit(DEFINE_ABBREV as u64, 3);
        let n = 100_000;
        w.vbr(n, 5);
        for i in 0..n {
            w.emit(1, 1);
            w.vbr(i % 100, 8);
        }
        let records = 200_000;
        for _ in 0..records {
            w.emit(4, 3);
        }
        w.end(3, len_at);

        let data = w.finish();
        let mut c = BitstreamCursor::new(&data);
        assert_eq!(c.advance().unwrap(), Entry::SubBlock(9));
        let start = c.clone();
        c.enter_block(9).unwrap();
        let mut skipped = 0;
        while let Entry::Record(id) = c.advance().unwrap() {
            assert_eq!(c.skip_record(id).unwrap(), 0);
            skipped += 1;
        }
        assert_eq!(skipped, records);

        let mut c = start;
        c.enter_block(9).unwrap();
        let mut read = 0;
        let err = loop {
            let Entry::Record(id) = c.advance().unwrap() else { panic!("budget not reached") };
            match c.read_record(id) {
                Ok(r) => assert_eq!(r.ops.len(), n as usize - 1),
                Err(e) => break e,
            }
            read += 1;
        };
        assert!(err.starts_with("Invalid record"), "{err}");
        assert!(read > 10 && read < 1000, "{read}");
    }

    /// `skip_vbr6` ends where `read_vbr64(6)` calls end, with the same errors: values of every
    /// length (1 to 14 chunks) at every bit offset, near the data's end and a limit, and values
    /// too long for 64 bits.
    #[test]
    fn skip_vbr6_is_read_vbr64() {
        fn pack(pad: usize, chunks: &[u64]) -> Vec<u8> {
            let mut bytes = vec![0u8; (pad + chunks.len() * 6) / 8 + 2];
            for (i, c) in chunks.iter().enumerate() {
                for b in 0..6 {
                    if c >> b & 1 != 0 {
                        let bit = pad + i * 6 + b;
                        bytes[bit / 8] |= 1 << (bit % 8);
                    }
                }
            }
            bytes
        }
        // A deterministic mix of values: short, long, and 13- and 14-chunk (too long) ones.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for case in 0..400 {
            let mut chunks = Vec::new();
            let lead = (case % 7) as usize;
            chunks.extend(std::iter::repeat_n(0, lead));
            let values = 1 + (next() % 20) as usize;
            for _ in 0..values {
                let len = match next() % 10 {
                    // 13 chunks is the longest value that fits; 14 is an error.
                    0 => 13 + (next() % 2) as usize,
                    1..=3 => 1 + (next() % 12) as usize,
                    _ => 1,
                };
                for k in 0..len {
                    let payload = next() & 31;
                    chunks.push(if k + 1 < len { payload | 32 } else { payload });
                }
            }
            let pad = (case % 8) as usize;
            let data = pack(pad, &chunks);
            let n = (next() % (values as u64 + 2)) as u32;
            for limit_cut in [0u64, 5, 13] {
                let mut a = BitCursor::new(&data);
                let mut b = BitCursor::new(&data);
                a.limit = a.limit.saturating_sub(limit_cut);
                b.limit = a.limit;
                a.pos = (pad + lead * 6) as u64;
                b.pos = a.pos;
                let slow = (0..n).try_for_each(|_| a.read_vbr64(6).map(drop));
                let fast = b.skip_vbr6(n);
                assert_eq!(slow.is_ok(), fast.is_ok(), "case {case}: {slow:?} {fast:?}");
                if slow.is_ok() {
                    assert_eq!(a.pos, b.pos, "case {case}");
                } else {
                    assert_eq!(slow, fast, "case {case}");
                }
            }
        }
    }

    /// Reads everything, entering every block, until an error or the end.
    fn walk(c: &mut BitstreamCursor) -> Result<(), String> {
        while !c.at_end() || c.depth() > 0 {
            match c.advance()? {
                Entry::SubBlock(0) => c.read_blockinfo_block()?,
                Entry::SubBlock(id) => c.enter_block(id)?,
                Entry::Record(id) => {
                    c.read_record(id)?;
                }
                Entry::EndBlock => {}
            }
        }
        Ok(())
    }
}
