//! Runs a fixed number of N = 1024 encryptions with fixed seeds, for counting instructions per encryption
//! under an emulator (qemu-user's instruction-count plugin): the count of a run with `R` encryptions minus that of a
//! run with none is `R` encryptions' worth, key set-up and process start-up cancelling out.
//!
//! `cargo run --release -p tfhe-sbc-device --example encryption_count -- <encryptions>`

use rand_core::SeedableRng;
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;

fn main() {
    let encryptions: u32 = match std::env::args().nth(1).map(|a| a.parse()) {
        Some(Ok(count)) => count,
        _ => {
            eprintln!("usage: encryption_count <number of encryptions>");
            std::process::exit(2);
        }
    };
    let params = TFHE_LIB_GLWE_1024;
    let mut key_rng = Blake2bXof::from_seed([0x11; 32]);
    let key = match GlweSecretKey::generate_binary([0u8; 1024], params.polynomial_size(), &mut key_rng) {
        Ok(key) => key,
        Err(e) => fail(e),
    };
    let mut encryptor = match GlweEncryptor::<1024>::new(&params, &key, Blake2bXof::from_seed([0x22; 32])) {
        Ok(encryptor) => encryptor,
        Err(e) => fail(e),
    };
    let message: Vec<u8> = (0..128u8).collect();
    let mut body = [0u32; 1024];
    // Folded into the exit output so that no encryption can be optimized away.
    let mut fold = 0u32;
    for _ in 0..encryptions {
        match encryptor.encrypt_seeded_glwe_ciphertext(&message, &mut body) {
            Ok(seed) => fold ^= body.iter().fold(u32::from(seed[0]), |acc, &w| acc.rotate_left(5) ^ w),
            Err(e) => fail(e),
        }
    }
    println!("{encryptions} encryptions, fold {fold:08x}");
}

fn fail(e: impl std::fmt::Display) -> ! {
    eprintln!("error: {e}");
    std::process::exit(1);
}
