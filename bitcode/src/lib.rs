//! LLVM bitcode as dtld's linker and its REAPI distributor read and write it: the bitstream
//! container (`bitstream`) and the module table of a ThinLTO summary shard (`shardpaths`).
//! Pure data handling, no I/O: the linker reads irsymtabs and renames its thin link's shards
//! with it, `dtld-reapi` renames the modules a shard names to the names they get inside a
//! remote action.

#![forbid(unsafe_code)]

pub mod bitstream;
pub mod shardpaths;
