//! [`IntakeConfig`]: what the intake accepts, and how much it may buffer.

use std::time::Duration;

/// What the intake accepts, and how much it may buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntakeConfig {
    /// Accept full-mask secret-key frames (the TFHE-SBC paper's form). Off by default: a sender who chooses
    /// the mask can turn any observable decrypted result into a key-bit oracle. Turn on only for trusted
    /// comparisons.
    pub allow_full_frames: bool,
    /// The most chunks a message may have.
    pub max_chunks_per_message: u32,
    /// The most incomplete messages one device may have open.
    pub max_open_messages_per_device: usize,
    /// The most incomplete messages open in total.
    pub max_open_messages: usize,
    /// How long after its first chunk a message must be complete; then it is dropped.
    pub max_message_age: Duration,
}

impl Default for IntakeConfig {
    /// Full frames off, 16 chunks per message (2 KiB at `N = 1024`), 4 open messages per device, 256 in
    /// total, 60 s.
    fn default() -> Self {
        Self {
            allow_full_frames: false,
            max_chunks_per_message: 16,
            max_open_messages_per_device: 4,
            max_open_messages: 256,
            max_message_age: Duration::from_secs(60),
        }
    }
}

impl IntakeConfig {
    /// The most ciphertext bytes the reassembly can hold at polynomial size `n` and GLWE dimension `k`
    /// (32-bit torus): every open message one chunk short of complete. 31.5 MiB for the default at
    /// `N = 1024`, `k = 1`.
    pub const fn max_buffered_bytes(&self, k: usize, n: usize) -> usize {
        self.max_open_messages * (self.max_chunks_per_message.saturating_sub(1) as usize) * (k + 1) * n * 4
    }
}
