//! The assembly passes against their portable twins (`crate::small_ntt`), on the same pseudo-random words
//! (any words: both wrap alike), at `N = 1024` with both primes' tables: the same words out.
//! A file of its own so that the edges go from the tests to both, not from the assembly to its twins.

use crate::arm_asm::*;
use crate::primes::{PRIMES, Twiddles};
use crate::{small_crt, small_ntt};

const N: usize = 1024;

fn words(seed: u32) -> [u32; N] {
    let mut x = seed | 1;
    core::array::from_fn(|_| {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    })
}

fn check(name: &str, asm: impl Fn(&mut [u32]), portable: impl Fn(&mut [u32])) {
    for seed in [1, 0x9e37_79b9, 0xdead_beef] {
        let (mut a, mut b) = (words(seed), words(seed));
        asm(&mut a);
        portable(&mut b);
        assert!(a == b, "{name}, seed {seed:#x}");
    }
}

#[test]
fn passes_equal_their_portable_twins() {
    for (tw, q) in [
        (Twiddles::<N, 3>::TABLE, PRIMES[3]),
        (Twiddles::<N, 4>::TABLE, PRIMES[4]),
    ] {
        check(
            "forward_first",
            |a| forward_first(a, tw, q),
            |a| small_ntt::forward_first(a, tw, q),
        );
        check(
            "forward_pass_last",
            |a| forward_pass_last(a, tw, N / 4, q),
            |a| small_ntt::forward_pass_last(a, tw, N / 4, q),
        );
        check(
            "inverse_pass_first",
            |a| inverse_pass_first(a, tw, N / 2, q),
            |a| small_ntt::inverse_pass_first(a, tw, N / 2, q),
        );
        macro_rules! forward {
            ($q:literal) => {
                check(
                    concat!("forward_pass ", $q),
                    |a| forward_pass::<$q>(a, tw, N / 4 / $q, q),
                    |a| small_ntt::forward_pass_body(a, tw, N / 4 / $q, $q, q),
                );
            };
        }
        forward!(4);
        forward!(16);
        forward!(64);
        forward!(256);
        macro_rules! inverse {
            ($t:literal, $reduce:literal) => {
                check(
                    concat!("inverse_pass ", $t, " ", $reduce),
                    |a| inverse_pass::<$t, $reduce>(a, tw, N / 2 / $t, q),
                    |a| small_ntt::inverse_pass_body::<$reduce>(a, tw, N / 2 / $t, $t, q),
                );
            };
        }
        inverse!(4, true);
        inverse!(4, false);
        inverse!(16, false);
        inverse!(64, false);
        inverse!(256, false);
        let b = words(77);
        check(
            "pointwise",
            |a| pointwise(a, &b, q),
            |a| small_crt::pointwise_portable(a, &b, q),
        );
    }
}

#[test]
fn crt_equals_its_portable_twin() {
    let (q0, q1) = (PRIMES[3], PRIMES[4]);
    // The inverse's output range: magnitude below 2^30.
    let (first, second) = (words(3).map(|x| x >> 1), words(5).map(|x| x >> 1));
    let constants = [0x0012_3456, 0x0054_3210, 0x0033_3333];
    let (mut a, mut b) = (words(7), words(7));
    crt_add_u32(&first, &second, &mut a, constants, [q0, q1]);
    small_crt::crt(&first, &second, &mut b, constants, [q0, q1], u32::wrapping_add);
    assert!(a == b);
}
