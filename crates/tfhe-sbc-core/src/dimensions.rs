//! Newtyped dimensions, so that a polynomial size is never passed where an LWE dimension is expected.

/// The number of coefficients `N` of a polynomial (a power of two).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PolynomialSize(pub usize);

/// The number `k` of mask polynomials of a GLWE ciphertext (`k = 1` for TRLWE).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GlweDimension(pub usize);

/// The number `n` of mask elements of an LWE ciphertext.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LweDimension(pub usize);

impl GlweDimension {
    /// The LWE dimension `k * N` of the ciphertexts sample-extracted from a GLWE of this shape.
    pub const fn to_equivalent_lwe_dimension(self, polynomial_size: PolynomialSize) -> LweDimension {
        LweDimension(self.0 * polynomial_size.0)
    }
}

impl LweDimension {
    /// The number of scalars of an LWE ciphertext: `n` mask elements and the body.
    pub const fn to_lwe_size(self) -> usize {
        self.0 + 1
    }
}
