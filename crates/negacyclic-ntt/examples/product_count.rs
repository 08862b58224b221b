//! `product_count R [N64]`: runs R negacyclic products at N = 1024 (the device's: forward transform of a
//! torus polynomial, pointwise product with a precomputed key spectrum, inverse with CRT added into a body),
//! for counting instructions per product under an emulator: count(R) - count(0), divided by R. With a second
//! argument it runs the 64-bit torus plan (three primes) at N = 2048 instead.
#![allow(clippy::unwrap_used)]

use negacyclic_ntt::{NttPlan32, NttPlan64};
use std::hint::black_box;

/// `PART` (environment) limits the loop to one step, for a breakdown: `forward` (`load`, the reduction of the
/// input, then `floaded`, the transforms), `mul`, `inverse` (transforms and CRT); unset, the whole product.
fn part() -> String {
    std::env::var("PART").unwrap_or_default()
}

fn run32(r: usize) -> u32 {
    const N: usize = 1024;
    const PLAN: NttPlan32 = NttPlan32::new::<N>();
    let a: Vec<u32> = (0..N as u32)
        .map(|i| i.wrapping_mul(0x9E37_79B9) ^ 0x5555_1234)
        .collect();
    let key: Vec<u8> = (0..N).map(|i| ((i * 7 + 3) % 5 % 2) as u8).collect();
    let mut key_spectrum = vec![[0u32; 2]; N];
    PLAN.forward(&key, &mut key_spectrum);
    let mut spectrum = vec![[0u32; 2]; N];
    let mut body = vec![0u32; N];
    let part = part();
    for _ in 0..r {
        if part.is_empty() || part == "forward" {
            PLAN.forward(black_box(&a), &mut spectrum);
        }
        if part == "load" {
            PLAN.load(&mut spectrum, 0, black_box(&a));
        }
        if part == "floaded" {
            PLAN.forward_loaded(black_box(&mut spectrum));
        }
        if part.is_empty() || part == "mul" {
            PLAN.mul_assign(&mut spectrum, black_box(&key_spectrum));
        }
        if part.is_empty() || part == "inverse" {
            PLAN.inverse_add_wrapping(&mut spectrum, &mut body);
        }
    }
    body.iter().fold(0, |x, &y| x ^ y)
}

fn run64(r: usize) -> u32 {
    const N: usize = 2048;
    const PLAN: NttPlan64 = NttPlan64::new::<N>();
    let a: Vec<u64> = (0..N as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    let key: Vec<u8> = (0..N).map(|i| ((i * 7 + 3) % 5 % 2) as u8).collect();
    let mut key_spectrum = vec![[0u32; 3]; N];
    PLAN.forward(&key, &mut key_spectrum);
    let mut spectrum = vec![[0u32; 3]; N];
    let mut body = vec![0u64; N];
    for _ in 0..r {
        PLAN.forward(black_box(&a), &mut spectrum);
        PLAN.mul_assign(&mut spectrum, black_box(&key_spectrum));
        PLAN.inverse_add_wrapping(&mut spectrum, &mut body);
    }
    body.iter().fold(0, |x, &y| x ^ y as u32)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r: usize = args.first().map_or(1, |s| s.parse().unwrap());
    let x = if args.len() > 1 { run64(r) } else { run32(r) };
    println!("{x:08x}");
}
