//! The body of the intake fuzz target (`fuzz/fuzz_targets/intake.rs`), shared with the corpus-replay test
//! so that both check exactly the same things.

use crate::intake::decode_frame;
use crate::stream::FrameReader;

/// Feeds `data` to the frame decoder and to the stream reader. Panics only if a decoded frame breaks an
/// invariant (or if the decoder itself panics, which is what the fuzzer looks for).
pub fn intake(data: &[u8]) {
    if let Ok(frame) = decode_frame(data) {
        let n = frame.parameters.polynomial_size().0;
        assert_eq!(frame.ciphertext.as_slice().len(), 2 * n);
        assert!(frame.header.chunk_index < frame.header.chunk_count);
        assert!(frame.chunk_message_bytes() <= n / 8);
    }
    let mut reader = FrameReader::with_limit(data, 1 << 16);
    while let Ok(Some(bytes)) = reader.next_frame() {
        let _ = decode_frame(bytes);
    }
}
