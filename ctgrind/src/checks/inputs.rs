//! The inputs of the checks: public generators for the harness's own data, and secrets (seeds, key bits,
//! messages, readings, MAC keys) classified for memcheck.

use super::sizes::N;
use crate::valgrind::{classify, classify_bits};
use rand_core::{Rng, SeedableRng};
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::entities::{GlweSecretKey, KeyStorage};
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_core::torus::UnsignedTorus;
use tfhe_sbc_device::csprng::XofConstruction;
use tfhe_sbc_device::csprng::xof::{Blake2bXof, KeyedXof};
use tfhe_sbc_device::encrypt::public_key_encryption::generate_seeded_glwe_public_key;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::frame::mac::{MAC_KEY_BYTES, MacKey};
use tfhe_sbc_device::noise::DeviceNoise;
use tfhe_sbc_device::product::NegacyclicProduct;
use tfhe_sbc_device::product::key_spectrum::compute_glwe_key_spectrum;

/// A public generator: the harness's own inputs (message bytes, key bits) before they are classified.
pub(crate) fn public_xof(label: u8) -> Blake2bXof {
    Blake2bXof::from_seed([label; 32])
}

/// A generator seeded from a classified seed: its whole stream is secret.
pub(crate) fn secret_xof(label: u8) -> Blake2bXof {
    secret_xof_of(label)
}

/// [`secret_xof`] of the XOF construction `X` (BLAKE2s: the 32-bit targets' default).
pub(crate) fn secret_xof_of<X: XofConstruction>(label: u8) -> KeyedXof<X> {
    let mut seed = [label; 32];
    classify(&mut seed);
    KeyedXof::from_seed(seed)
}

/// `M` public bytes, each 0 or 1.
pub(crate) fn binary_bytes<const M: usize>(label: u8) -> [u8; M] {
    let mut bytes = [0u8; M];
    public_xof(label).fill_bytes(&mut bytes);
    for b in &mut bytes {
        *b &= 1;
    }
    bytes
}

/// `M` bytes, each 0 or 1, with bit 0 of each classified.
pub(crate) fn secret_bits<const M: usize>(label: u8) -> [u8; M] {
    let mut bytes = binary_bytes(label);
    classify_bits(&mut bytes, 0x01);
    bytes
}

/// A binary key of `M` coefficients with bit 0 of each classified.
pub(crate) fn secret_key<const M: usize>(label: u8) -> GlweSecretKey<[u8; M]> {
    GlweSecretKey::from_container(secret_bits(label), PolynomialSize(M)).expect("a binary key of M coefficients")
}

/// `M` classified reading bytes.
pub(crate) fn secret_readings<const M: usize>(label: u8) -> [u8; M] {
    let mut readings = [0u8; M];
    public_xof(label).fill_bytes(&mut readings);
    classify(&mut readings);
    readings
}

/// A classified message of `N / 8` bytes.
pub(crate) fn secret_message(label: u8) -> [u8; N / 8] {
    secret_readings(label)
}

/// A MAC key with every bit classified.
pub(crate) fn secret_mac_key(label: u8) -> MacKey {
    let mut bytes = [label; MAC_KEY_BYTES];
    classify(&mut bytes);
    MacKey::from_bytes(bytes)
}

/// The spectrum of the `k = 1` key `key` under `plan`.
pub(crate) fn spectrum_of<P: NegacyclicProduct>(plan: &P, key: &GlweSecretKey<impl KeyStorage>) -> Vec<P::Spectral> {
    let mut spectrum = vec![P::SPECTRAL_ZERO; plan.polynomial_size()];
    compute_glwe_key_spectrum(plan, key, &mut spectrum).expect("k = 1, a key of the plan's size");
    spectrum
}

/// A seeded public key `(seed, body)` under `plan`, public throughout: made from the public binary key
/// `label` and the public randomness `label + 1`.
pub(crate) fn public_key<P: NegacyclicProduct>(plan: &P, noise: &DeviceNoise, label: u8) -> ([u8; 32], Vec<P::Torus>) {
    let n = plan.polynomial_size();
    let mut key_bytes = vec![0u8; n];
    public_xof(label).fill_bytes(&mut key_bytes);
    key_bytes.iter_mut().for_each(|b| *b &= 1);
    let key = GlweSecretKey::from_container(key_bytes, PolynomialSize(n)).expect("a binary key");
    let spectrum = spectrum_of(plan, &key);
    let (mut body, mut scratch) = (vec![P::Torus::ZERO; n], vec![P::SPECTRAL_ZERO; n]);
    let seed = generate_seeded_glwe_public_key(
        plan,
        &spectrum,
        noise,
        &mut body,
        &mut scratch,
        &mut public_xof(label + 1),
    )
    .expect("N words");
    (seed, body)
}

/// A `TFHE_LIB_GLWE_1024` encryptor of the secret key `label`, its XOF seeded from the secret `label + 1`.
pub(crate) fn secret_encryptor(label: u8) -> GlweEncryptor<N> {
    GlweEncryptor::<N>::new(&TFHE_LIB_GLWE_1024, &secret_key::<N>(label), secret_xof(label + 1))
        .expect("TFHE_LIB_GLWE_1024")
}
