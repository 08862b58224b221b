//! Gaussian sampling: the Ziggurat (the TFHE-SBC paper's sampler, an opt-in on the device) and the polar
//! method (the tfhe-rs/TFHEpp baseline). The device's default noise is [`crate::tuniform`], which is
//! constant-time; these samplers are not.
//!
//! Both draw from any rand_core 0.10 [`Rng`](rand_core::Rng). [`NormalSampler`] gives standard normal `f64`s;
//! [`NormalSampler::sample_torus`] scales by a standard deviation in units of `1/q` and rounds to the
//! nearest integer modulo `q`, which is the noise a fresh TFHE ciphertext carries.
//!
//! # Timing
//! Neither sampler runs in constant time, on any target, and the noise is as secret as the key: the
//! boolean encoding vanishes modulo `2^29`, so `b - e = a * s (mod 2^29)` with `a` public, and the noise of
//! a couple of ciphertexts gives the key by linear algebra over GF(2).
//! * The Ziggurat loads its tables `W`, `K`, `F` at an index made of random bits (the layer), compares the
//!   magnitude against `K[layer]` with a branch, and sends 1.5% of draws into a slower path with `exp`/`log`
//!   (wedges) or a loop (the tail beyond `r = 3.65`). A co-resident process sees the table lines it touches
//!   (cache timing; the "Flush, Gauss, and Reload" attack on BLISS, CHES 2016), a power or EM probe sees the
//!   branches: both classify samples by layer, i.e. learn their magnitudes.
//! * The polar method rejects about 21.5% of pairs, with the same kind of leak, and calls `log`/`sqrt`.
//!
//! The workspace's constant-time check runs the Ziggurat under valgrind memcheck with its random bits
//! marked secret and shows that the check reports it.

mod polar;
mod sampler;
mod ziggurat;

pub use polar::Polar;
pub use sampler::NormalSampler;
pub use ziggurat::Ziggurat;
