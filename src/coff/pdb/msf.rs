//! The MSF container a PDB is made of: numbered streams stored in fixed-size blocks, a stream
//! directory listing each stream's size and blocks, and the free page map. This is the last
//! step of PDB writing: the other modules produce stream contents, this one lays them out.
//!
//! Layout (LLVM's `MSFBuilder` reads and writes the same): block 0 the superblock, blocks 1
//! and 2 of every 4096-block interval the two free page maps, the streams' blocks in stream
//! order, then the directory's blocks, then the block that lists the directory's blocks.

pub const BLOCK_SIZE: usize = 4096;
const MAGIC: &[u8; 32] = b"Microsoft C/C++ MSF 7.00\r\n\x1aDS\0\0\0";

/// Whether block `b` is one of the free page map blocks (1 and 2 of each interval).
fn is_fpm(b: usize) -> bool {
    matches!(b % BLOCK_SIZE, 1 | 2)
}

struct Blocks {
    next: usize,
}

impl Blocks {
    fn take(&mut self) -> usize {
        while is_fpm(self.next) {
            self.next += 1;
        }
        let b = self.next;
        self.next += 1;
        b
    }
    fn take_n(&mut self, bytes: usize) -> Vec<usize> {
        (0..bytes.div_ceil(BLOCK_SIZE)).map(|_| self.take()).collect()
    }
}

/// The whole MSF file for `streams` (stream i is `streams[i]`).
pub fn build(streams: &[Vec<u8>]) -> Vec<u8> {
    let mut alloc = Blocks { next: 3 };
    let stream_blocks: Vec<Vec<usize>> = streams.iter().map(|s| alloc.take_n(s.len())).collect();
    let mut dir = Vec::new();
    dir.extend_from_slice(&(streams.len() as u32).to_le_bytes());
    for s in streams {
        dir.extend_from_slice(&(s.len() as u32).to_le_bytes());
    }
    for bs in &stream_blocks {
        for &b in bs {
            dir.extend_from_slice(&(b as u32).to_le_bytes());
        }
    }
    let dir_blocks = alloc.take_n(dir.len().max(1));
    let map_block = alloc.take();
    // The file ends with a whole block; FPM blocks of the last interval are part of it.
    let num_blocks = alloc.next.max(3);
    let mut out = vec![0u8; num_blocks * BLOCK_SIZE];
    let put = |out: &mut [u8], blocks: &[usize], data: &[u8]| {
        for (i, chunk) in data.chunks(BLOCK_SIZE).enumerate() {
            let o = blocks[i] * BLOCK_SIZE;
            out[o..o + chunk.len()].copy_from_slice(chunk);
        }
    };
    for (s, bs) in streams.iter().zip(&stream_blocks) {
        put(&mut out, bs, s);
    }
    put(&mut out, &dir_blocks, &dir);
    let list: Vec<u8> = dir_blocks.iter().flat_map(|&b| (b as u32).to_le_bytes()).collect();
    put(&mut out, &[map_block], &list);
    write_fpm(&mut out, num_blocks);
    let sb = &mut out[..BLOCK_SIZE];
    sb[..32].copy_from_slice(MAGIC);
    let fields = [BLOCK_SIZE as u32, 2, num_blocks as u32, dir.len() as u32, 0, map_block as u32];
    for (i, v) in fields.iter().enumerate() {
        sb[32 + 4 * i..36 + 4 * i].copy_from_slice(&v.to_le_bytes());
    }
    out
}

/// The free page maps (blocks 1 and 2 of each interval; a set bit is a free block): every
/// block of the file is in use, the bits past its end say free. The superblock names the
/// second one active, as LLVM's `MSFBuilder` leaves it after its commit.
fn write_fpm(out: &mut [u8], num_blocks: usize) {
    let intervals = num_blocks.div_ceil(BLOCK_SIZE);
    for k in 0..intervals {
        for which in [1, 2] {
            let o = (k * BLOCK_SIZE + which) * BLOCK_SIZE;
            if o + BLOCK_SIZE > out.len() {
                break;
            }
            let page = &mut out[o..o + BLOCK_SIZE];
            page.fill(0xff);
            for (i, byte) in page.iter_mut().enumerate() {
                let first = (k * BLOCK_SIZE + i) * 8;
                for bit in 0..8 {
                    if first + bit < num_blocks {
                        *byte &= !(1 << bit);
                    }
                }
            }
        }
    }
}
