//! Messages: `N` bits per ciphertext, packed least-significant bit first, and byte strings cut into
//! `N`-bit chunks.

/// Bit `i` of a packed message: `(bytes[i / 8] >> (i % 8)) & 1`; bits past the end of `bytes` are 0.
#[inline]
pub fn message_bit(bytes: &[u8], i: usize) -> bool {
    bytes.get(i / 8).is_some_and(|b| (b >> (i % 8)) & 1 == 1)
}

/// One `N`-bit piece of a longer byte string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// The chunk's position, from 0.
    pub index: u32,
    /// How many chunks the whole message has.
    pub count: u32,
    /// The chunk's bytes: `N / 8`, or fewer for the last chunk (the rest is encrypted as zero padding).
    pub bytes: &'a [u8],
}

/// Cuts `message` into chunks of `chunk_bytes` (`N / 8`) bytes. An empty message gives one empty chunk,
/// so that it still travels (and its length, 0, is recorded).
///
/// # Panics
/// If `chunk_bytes` is 0 or the message needs more than `u32::MAX` chunks.
pub fn chunks(message: &[u8], chunk_bytes: usize) -> impl ExactSizeIterator<Item = Chunk<'_>> {
    assert!(chunk_bytes > 0, "chunk size must be positive");
    let count = message.len().div_ceil(chunk_bytes).max(1);
    let count_u32 = u32::try_from(count).expect("too many chunks");
    (0..count).map(move |i| {
        let start = (i * chunk_bytes).min(message.len());
        let end = (start + chunk_bytes).min(message.len());
        Chunk {
            index: i as u32,
            count: count_u32,
            bytes: &message[start..end],
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_are_lsb_first_and_padded() {
        let m = [0b0000_0101u8, 0x80];
        let bits: [bool; 18] = core::array::from_fn(|i| message_bit(&m, i));
        assert!(bits[0] && !bits[1] && bits[2] && bits[15] && !bits[16] && !bits[17]);
    }

    #[test]
    fn chunking() {
        let data = [1u8; 300];
        let c: [Chunk<'_>; 3] = {
            let mut it = chunks(&data, 128);
            assert_eq!(it.len(), 3);
            core::array::from_fn(|_| it.next().unwrap())
        };
        assert_eq!((c[0].index, c[0].count, c[0].bytes.len()), (0, 3, 128));
        assert_eq!((c[2].index, c[2].bytes.len()), (2, 44));
        let mut empty = chunks(&[], 128);
        assert_eq!(empty.next().map(|c| (c.count, c.bytes.len())), Some((1, 0)));
        assert!(empty.next().is_none());
    }
}
