//! A generator whose outputs are secret ([`ClassifiedRng`]): the "RNG output undefined" of the sampler
//! checks.

use crate::valgrind;
use rand_core::{Rng, TryCryptoRng, TryRng};

/// A generator whose every output is marked secret before it is returned: the "RNG output undefined" of a
/// sampler check, independent of how the inner generator computes it.
#[derive(Debug)]
pub struct ClassifiedRng<R>(pub R);

impl<R: Rng> TryRng for ClassifiedRng<R> {
    type Error = core::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        let mut x = self.0.next_u32();
        valgrind::classify(&mut x);
        Ok(x)
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let mut x = self.0.next_u64();
        valgrind::classify(&mut x);
        Ok(x)
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        self.0.fill_bytes(dst);
        valgrind::classify(dst);
        Ok(())
    }
}

/// Only for the checks: the output is as good as the inner generator's.
impl<R: Rng + TryCryptoRng> TryCryptoRng for ClassifiedRng<R> {}
