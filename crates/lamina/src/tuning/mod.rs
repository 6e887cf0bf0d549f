//! Settings chosen from what the data and the memory budget look like, so
//! that `Options::default()` needs no tuning: the data block size
//! ([`block_size`]) and the level sizes ([`levels`]).
//!
//! Policy only: each choice is a pure function of what was seen and of what
//! the user set, tested as data. `lamina stat` prints every choice with its
//! reason, and says when a setting the user forced is far from the choice.

mod block_size;
pub(crate) mod levels;
mod shape;

pub use block_size::{choose_block_size, BlockSizeChoice};
pub(crate) use block_size::{DEVICE_BLOCK, FIRST_BLOCK};
pub use levels::{choose_levels, LevelChoice};
pub use shape::DataShape;
pub(crate) use shape::SAMPLE;

/// `Options::block_size` value asking for the block size to be chosen.
pub(crate) const AUTOMATIC: usize = 0;

fn kib(bytes: usize) -> String {
    kib_u64(bytes as u64)
}

/// `bytes` in KiB, MiB or GiB when it is a whole number of them.
fn kib_u64(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} B")
}
