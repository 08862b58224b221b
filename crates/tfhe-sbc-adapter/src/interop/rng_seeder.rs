//! tfhe-rs key generation seeded from the caller's CSPRNG ([`RngSeeder`]).

use zeroize::Zeroize;

/// A tfhe-rs `Seeder` that draws its 128-bit seeds from a caller's CSPRNG, so that key generation takes its
/// randomness from the same place as the rest of provisioning (the OS in production, fixed seeds in tests).
pub(crate) struct RngSeeder<'a, R: ?Sized>(pub(crate) &'a mut R);

impl<R: rand_core::CryptoRng + ?Sized> tfhe::core_crypto::commons::math::random::Seeder for RngSeeder<'_, R> {
    fn seed(&mut self) -> tfhe::core_crypto::commons::math::random::Seed {
        let mut bytes = [0u8; 16];
        self.0.fill_bytes(&mut bytes);
        let seed = tfhe::core_crypto::commons::math::random::Seed(u128::from_le_bytes(bytes));
        bytes.zeroize();
        seed
    }

    fn is_available() -> bool {
        true
    }
}
