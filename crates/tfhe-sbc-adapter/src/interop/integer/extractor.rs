//! Fleet-mode integer intake ([`IntegerExtractor`]): GLWE ciphertexts to shortint blocks, radix ciphertexts
//! and `FheUint`s, by sample extraction and wrapping.

use crate::extraction::extract_lwe_sample_into;
use crate::interop::error::InteropError;
use rayon::prelude::*;
use tfhe::core_crypto::prelude::{CiphertextModulus, LweCiphertext, LweCiphertextOwned};
use tfhe::shortint::ciphertext::{Degree, NoiseLevel};
use tfhe::shortint::{AtomicPatternKind, CarryModulus, MessageModulus, PBSOrder};
use tfhe::{FheUint, FheUintId, ReRandomizationMetadata, Tag};
use tfhe_sbc_core::entities::GlweCiphertext;
use tfhe_sbc_core::parameters::{IntegerParameters, MESSAGE_2_CARRY_2_TUNIFORM_2M128};

/// Fleet-mode integer intake: GLWE ciphertexts of [`MESSAGE_2_CARRY_2_TUNIFORM_2M128`] (under the client key's
/// GLWE key) to shortint blocks, radix ciphertexts and high-level `FheUint`s, by sample extraction and
/// wrapping, with no key switch and no bootstrap. Stateless apart from the set; cheap to build.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntegerExtractor {
    set: IntegerParameters,
}

impl Default for IntegerExtractor {
    fn default() -> Self {
        Self {
            set: MESSAGE_2_CARRY_2_TUNIFORM_2M128,
        }
    }
}

impl IntegerExtractor {
    /// The extractor for [`MESSAGE_2_CARRY_2_TUNIFORM_2M128`], the only integer set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The set.
    pub fn parameters(&self) -> IntegerParameters {
        self.set
    }

    /// The LWE size of a block: `k * N + 1` (2049).
    pub fn lwe_size(&self) -> usize {
        let glwe = self.set.glwe();
        glwe.glwe_dimension().0 * glwe.polynomial_size().0 + 1
    }

    /// Checks a ciphertext's shape against the set.
    pub fn check_glwe<C: AsRef<[u64]>>(&self, glwe: &GlweCiphertext<u64, C>) -> Result<(), InteropError> {
        let set = self.set.glwe();
        let expected = (set.glwe_dimension().0, set.polynomial_size().0);
        let found = (glwe.glwe_dimension().0, glwe.polynomial_size().0);
        if expected == found {
            Ok(())
        } else {
            Err(InteropError::WrongGlweShape { expected, found })
        }
    }

    /// Readings of `value_bits` bits one ciphertext holds (`N / (value_bits / 2)`).
    pub fn capacity(&self, value_bits: u32) -> Result<usize, InteropError> {
        Ok(self.set.glwe().polynomial_size().0 / self.set.encoding().blocks_per_value(value_bits)?)
    }

    /// Wraps an LWE ciphertext under the big key (dimension `k * N`) as a fresh shortint block: degree 3,
    /// [`NoiseLevel::NOMINAL`], the set's moduli, `KeyswitchBootstrap` order. Errors if it has another size.
    pub fn wrap_block(&self, lwe: LweCiphertextOwned<u64>) -> Result<tfhe::shortint::Ciphertext, InteropError> {
        if lwe.lwe_size().0 != self.lwe_size() || !lwe.ciphertext_modulus().is_native_modulus() {
            return Err(InteropError::WrongLweSize {
                expected: self.lwe_size(),
                found: lwe.lwe_size().0,
            });
        }
        Ok(self.wrap_unchecked(lwe))
    }

    fn wrap_unchecked(&self, lwe: LweCiphertextOwned<u64>) -> tfhe::shortint::Ciphertext {
        tfhe::shortint::Ciphertext::new(
            lwe,
            Degree::new(self.set.message_modulus() - 1),
            NoiseLevel::NOMINAL,
            MessageModulus(self.set.message_modulus()),
            CarryModulus(self.set.carry_modulus()),
            AtomicPatternKind::Standard(PBSOrder::KeyswitchBootstrap),
        )
    }

    /// Coefficient `index`, extracted (Algorithm 1, `extraction::extract_lwe_sample_into`) into a fresh LWE ciphertext of
    /// `k * N + 1` words (one pass, no zero-fill first).
    fn extract(&self, glwe: &GlweCiphertext<u64, impl AsRef<[u64]>>, index: usize) -> LweCiphertextOwned<u64> {
        let mut words = Vec::with_capacity(self.lwe_size());
        extract_lwe_sample_into(glwe, index, &mut words);
        LweCiphertext::from_container(words, CiphertextModulus::new_native())
    }

    /// The shortint block of coefficient `index`.
    pub fn extract_block<C: AsRef<[u64]>>(
        &self,
        glwe: &GlweCiphertext<u64, C>,
        index: usize,
    ) -> Result<tfhe::shortint::Ciphertext, InteropError> {
        self.check_glwe(glwe)?;
        let n = glwe.polynomial_size().0;
        if index >= n {
            return Err(InteropError::ReadingsOutOfRange {
                first: index,
                count: 1,
                capacity: n,
            });
        }
        Ok(self.wrap_unchecked(self.extract(glwe, index)))
    }

    /// Checks `first..first + count` readings of `value_bits` bits against the ciphertext and returns the
    /// blocks per reading.
    pub(super) fn reading_range<C: AsRef<[u64]>>(
        &self,
        glwe: &GlweCiphertext<u64, C>,
        value_bits: u32,
        first: usize,
        count: usize,
    ) -> Result<usize, InteropError> {
        self.check_glwe(glwe)?;
        let blocks = self.set.encoding().blocks_per_value(value_bits)?;
        let capacity = glwe.polynomial_size().0 / blocks;
        if first.checked_add(count).is_none_or(|end| end > capacity) {
            return Err(InteropError::ReadingsOutOfRange { first, count, capacity });
        }
        Ok(blocks)
    }

    /// Reading `index` of `value_bits` bits as a radix ciphertext (its blocks little-endian).
    pub fn extract_radix<C: AsRef<[u64]>>(
        &self,
        glwe: &GlweCiphertext<u64, C>,
        value_bits: u32,
        index: usize,
    ) -> Result<tfhe::integer::RadixCiphertext, InteropError> {
        let blocks = self.reading_range(glwe, value_bits, index, 1)?;
        Ok(self.radix_unchecked(glwe, blocks, index))
    }

    fn radix_unchecked<C: AsRef<[u64]>>(
        &self,
        glwe: &GlweCiphertext<u64, C>,
        blocks: usize,
        index: usize,
    ) -> tfhe::integer::RadixCiphertext {
        let start = index * blocks;
        let blocks: Vec<_> = (start..start + blocks)
            .map(|i| self.wrap_unchecked(self.extract(glwe, i)))
            .collect();
        tfhe::integer::RadixCiphertext::from(blocks)
    }

    /// Readings `first..first + count` as high-level `FheUint<Id>` (`FheUint8`: 4 blocks each, and so on),
    /// on the calling thread.
    pub fn extract_readings<Id: FheUintId, C: AsRef<[u64]>>(
        &self,
        glwe: &GlweCiphertext<u64, C>,
        first: usize,
        count: usize,
    ) -> Result<Vec<FheUint<Id>>, InteropError> {
        let reading = self.reading_fn::<Id, C>(glwe, first, count)?;
        Ok((first..first + count).map(reading).collect())
    }

    /// [`IntegerExtractor::extract_readings`] on rayon's pool, one task per reading.
    pub fn extract_readings_par<Id: FheUintId + Send, C: AsRef<[u64]> + Sync>(
        &self,
        glwe: &GlweCiphertext<u64, C>,
        first: usize,
        count: usize,
    ) -> Result<Vec<FheUint<Id>>, InteropError> {
        let reading = self.reading_fn(glwe, first, count)?;
        Ok((first..first + count).into_par_iter().map(reading).collect())
    }

    /// Reading `r` of `glwe` as an `FheUint<Id>`, once readings `first..first + count` are checked to be in
    /// range ([`IntegerExtractor::reading_range`]).
    fn reading_fn<'a, Id: FheUintId, C: AsRef<[u64]>>(
        &'a self,
        glwe: &'a GlweCiphertext<u64, C>,
        first: usize,
        count: usize,
    ) -> Result<impl Fn(usize) -> FheUint<Id> + 'a, InteropError> {
        let blocks = self.reading_range(glwe, FheUint::<Id>::num_bits() as u32, first, count)?;
        Ok(move |r| fhe_uint(self.radix_unchecked(glwe, blocks, r)))
    }
}

/// A radix ciphertext as a high-level `FheUint<Id>` (default tag, no re-randomization metadata).
fn fhe_uint<Id: FheUintId>(radix: tfhe::integer::RadixCiphertext) -> FheUint<Id> {
    FheUint::from_raw_parts(radix, Id::default(), Tag::default(), ReRandomizationMetadata::default())
}
