//! The FNV-1a digest of a check's declassified outputs ([`Digest`], absorbing bytes or [`Word`]s), printed so
//! that nothing is optimized away.

/// A running FNV-1a digest of public (declassified) outputs.
#[derive(Clone, Copy, Debug)]
pub struct Digest(u64);

impl Default for Digest {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Digest {
    /// Absorbs `bytes` (which must be declassified: the digest branches on nothing but reads every byte).
    pub fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Absorbs words as little-endian bytes.
    pub fn update_words<W: Word>(&mut self, words: &[W]) {
        for &w in words {
            w.absorb_into(self);
        }
    }

    /// The digest so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// An unsigned word of a checked output, which a [`Digest`] absorbs as its little-endian bytes.
pub trait Word: Copy {
    /// Absorbs the word's little-endian bytes.
    fn absorb_into(self, digest: &mut Digest);
}

macro_rules! word {
    ($($t:ty),*) => {
        $(impl Word for $t {
            fn absorb_into(self, digest: &mut Digest) {
                digest.update(&self.to_le_bytes());
            }
        })*
    };
}
word!(u8, u32, u64);
